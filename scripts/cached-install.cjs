// Repo tools that are too big to be devDependencies (cdktf-cli: about 420 MB) or tied to the
// TypeScript version (jsii) are installed on first use into node_modules/.cache/<name>, so a
// fresh `npm ci` starts without them. Written to a temp folder and renamed, so a half install
// never counts as done.
const { spawnSync } = require("node:child_process");
const { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } = require("node:fs");
const path = require("node:path");

/**
 * The path of `bin` from package `spec` (e.g. "cdktf-cli@0.21.0", or a list installed together) under
 * <root>/node_modules/.cache/<folder>, installing it first when missing. Throws with npm's
 * output when the install fails. `onInstalled(seconds, dir)` is told of a fresh install.
 */
exports.cachedInstall = ({ root, folder, spec, bin, timeoutMs = 300000, onInstalled }) => {
  const dir = path.join(root, "node_modules", ".cache", folder);
  const binary = path.join(dir, "node_modules", ".bin", bin);
  if (existsSync(binary)) return binary;
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(path.join(tmp, "package.json"), '{ "private": true }\n');
  const started = Date.now();
  const res = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", ...[].concat(spec)], { cwd: tmp, encoding: "utf8", timeout: timeoutMs });
  if (res.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`installing ${[].concat(spec).join(" ")} failed (${res.error ? res.error.message : `exit ${res.status}`})\n${res.stderr}`);
  }
  try {
    renameSync(tmp, dir);
  } catch (err) {
    // Another process (a parallel test file, a second `npm test`) installed it first: use theirs.
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(binary)) return binary;
    throw err;
  }
  if (onInstalled) onInstalled((Date.now() - started) / 1000, dir);
  return binary;
};
