// Fails, naming the files, when the package npm would publish lacks a file its entry points need.
// npm itself never does: `npm pack --ignore-scripts` in a checkout without lib/ exits 0 with a
// package of four files. prepack runs this after its build; a package packed elsewhere is
// checked as the tarball itself: `node scripts/pack-check.cjs <file.tgz>`.
const { execFileSync } = require("node:child_process");
const { existsSync, mkdtempSync, readFileSync, rmSync } = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** The script Terraform runs: a folder the constructs find by path at synth time, which nothing imports. */
const RUNTIME_ASSETS = ["lib/assets/gpucloud-tf.js", "lib/assets/gpucloud-tf-main.js", "lib/assets/package.json"];

/** Every file the manifest names (main, types, bin, exports, typesVersions) and the runtime assets, package-relative. */
function entryPoints(manifest) {
  const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin ?? {})];
  for (const target of Object.values(manifest.exports ?? {})) {
    targets.push(...(typeof target === "string" ? [target] : Object.values(target)));
  }
  for (const map of Object.values(manifest.typesVersions ?? {})) for (const list of Object.values(map)) targets.push(...list);
  targets.push(...RUNTIME_ASSETS);
  return [...new Set(targets.filter(Boolean).map((t) => path.posix.normalize(t)).filter((t) => t !== "package.json"))];
}

// Relative module specifiers in compiled .js (require) and .d.ts (import/export ... from) files.
const SPECIFIER = /(?:\brequire\(\s*|\bimport\(\s*|\bfrom\s+|^\s*import\s+)["'](\.{1,2}\/[^"']*)["']/gm;

/**
 * Every file of `dir` reachable from `entries` through relative imports, each module with its
 * .js/.d.ts twin (`reached`), and what is named but absent (`missing`, with who names it).
 */
function closure(dir, entries) {
  const reached = new Set();
  const missing = [];
  const queue = entries.map((rel) => ({ rel, from: "package.json" }));
  while (queue.length > 0) {
    const { rel, from } = queue.pop();
    if (reached.has(rel)) continue;
    const abs = path.join(dir, rel);
    if (!existsSync(abs)) {
      missing.push(`${rel} (named by ${from})`);
      continue;
    }
    reached.add(rel);
    if (!/\.(js|d\.ts)$/.test(rel)) continue;
    // A module ships as a pair: its code and its declarations.
    const twin = rel.endsWith(".d.ts") ? rel.replace(/\.d\.ts$/, ".js") : rel.replace(/\.js$/, ".d.ts");
    if (existsSync(path.join(dir, twin))) queue.push({ rel: twin, from: rel });
    for (const m of readFileSync(abs, "utf8").matchAll(SPECIFIER)) {
      const base = path.posix.join(path.posix.dirname(rel), m[1]).replace(/\.js$/, "");
      const ext = rel.endsWith(".d.ts") ? ".d.ts" : ".js";
      const candidates = [`${base}${ext}`, `${base}/index${ext}`];
      queue.push({ rel: candidates.find((c) => existsSync(path.join(dir, c))) ?? candidates[0], from: rel });
    }
  }
  return { reached, missing };
}

/** The files `npm pack` would put in the package of `dir` (its scripts not run: no build, no recursion from prepack). */
function packedFiles(dir) {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: dir, encoding: "utf8" });
  return JSON.parse(out)[0].files.map((f) => f.path);
}

/** What the package of `dir`, holding `files`, lacks: each entry point and module they reach, or nothing. */
function problems(dir, files) {
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const shipped = new Set(files);
  const { reached, missing } = closure(dir, entryPoints(manifest));
  const unshipped = [...reached].filter((f) => !shipped.has(f)).map((f) => `${f} (built, but not in "files")`);
  return [...missing, ...unshipped].sort();
}

function main(args) {
  const target = path.resolve(args[0] ?? ".");
  let label = path.basename(target);
  let dir = target;
  let files;
  let unpacked;
  if (target.endsWith(".tgz")) {
    unpacked = mkdtempSync(path.join(os.tmpdir(), "pack-check-"));
    execFileSync("tar", ["-xzf", target, "-C", unpacked, "--strip-components=1"]);
    dir = unpacked;
    files = execFileSync("tar", ["-tzf", target], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ""));
  } else {
    files = packedFiles(dir);
    const { name, version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    label = `${name}@${version}`;
  }
  try {
    const lacking = problems(dir, files);
    if (lacking.length === 0) {
      // stderr, like the failures: in prepack, stdout is npm's own (`npm pack --json` prints JSON there).
      console.error(`pack-check: ${label}: ${files.length} files, every entry point and the modules it reaches`);
      return 0;
    }
    console.error(`pack-check: ${label} would ship without ${lacking.length} file(s) its entry points need:`);
    for (const line of lacking.slice(0, 20)) console.error(`  ${line}`);
    if (lacking.length > 20) console.error(`  … and ${lacking.length - 20} more`);
    console.error("Build first (npm run build); npm pack and npm publish do, in prepack, unless run with --ignore-scripts.");
    return 1;
  } finally {
    if (unpacked) rmSync(unpacked, { recursive: true, force: true });
  }
}

module.exports = { entryPoints, closure, packedFiles, problems };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
