// A consumer project around the packed library, as `cdktf init --template=typescript` makes one,
// for the packaging tests. Offline: the tarball is unpacked into node_modules/cdktf-gpucloud and
// every other package is a symlink into this repository's node_modules (Node and tsc follow
// symlinks to one real copy, so cdktf/cdktn/constructs are shared by the app and the library).
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const REPO = path.resolve(__dirname, "..", "..");

/** The compilerOptions of cdktf 0.21's TypeScript template (templates/typescript/tsconfig.json). */
export const CDKTF_INIT_COMPILER_OPTIONS = {
  alwaysStrict: true,
  declaration: true,
  experimentalDecorators: true,
  inlineSourceMap: true,
  inlineSources: true,
  lib: ["es2018"],
  module: "CommonJS",
  noEmitOnError: true,
  noFallthroughCasesInSwitch: true,
  noImplicitAny: true,
  noImplicitReturns: true,
  noImplicitThis: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  resolveJsonModule: true,
  strict: true,
  strictNullChecks: true,
  strictPropertyInitialization: true,
  stripInternal: true,
  target: "ES2018",
  incremental: true,
  skipLibCheck: true,
};

/** Packages a consumer has besides the library (symlinked from this repository). */
const LINKED = ["cdktf", "cdktn", "constructs", "undici", "zod", "@cdktf/provider-null", "@cdktf/provider-external", "@types/node"];

/** Runs a command; throws with its output unless it exits 0. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  const res = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: 180_000, maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(" ")} (in ${cwd}) failed: ${res.error?.message ?? `exit ${res.status}`}\n${res.stdout}\n${res.stderr}`,
    );
  }
  return res;
}

/** `npm pack` of this repository (no scripts: `npm test` has built lib/ already); the tarball's path. */
export function packLibrary(dest: string): string {
  const res = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dest], REPO);
  const [info] = JSON.parse(res.stdout) as { filename: string }[];
  return path.join(dest, info.filename);
}

/** The environment of a CI job: no terminal, nothing of this repository's npm run or GPUCLOUD_*. */
export function jobEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|GPUCLOUD_)/i.test(k)));
  // The registry's packages from npm's cache, as `npm ci` of this repository left them.
  return { ...env, CI: "true", npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };
}

/**
 * A fresh consumer project with the tarball unpacked into node_modules/cdktf-gpucloud; `without`
 * names linked packages the project lacks.
 */
export function makeConsumer(tarball: string, without: readonly string[] = []): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gpucloud-consumer-"));
  writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name: "consumer", version: "1.0.0", private: true, main: "main.js" }, null, 2)}\n`,
  );
  const lib = path.join(dir, "node_modules", "cdktf-gpucloud");
  mkdirSync(lib, { recursive: true });
  run("tar", ["-xzf", tarball, "-C", lib, "--strip-components=1"], dir);
  for (const name of LINKED.filter((n) => !without.includes(n))) {
    const link = path.join(dir, "node_modules", name);
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(path.join(REPO, "node_modules", name), link, "dir");
  }
  return dir;
}

/** Writes tsconfig.<name>.json (cdktf init's options plus `overrides`) and runs tsc --noEmit on `files`. */
export function typecheck(dir: string, name: string, overrides: Record<string, unknown>, files: string[]): SpawnSyncReturns<string> {
  const config = path.join(dir, `tsconfig.${name}.json`);
  const compilerOptions: Record<string, unknown> = { ...CDKTF_INIT_COMPILER_OPTIONS, ...overrides, incremental: false, noEmit: true };
  for (const [k, v] of Object.entries(compilerOptions)) if (v === null) delete compilerOptions[k];
  writeFileSync(config, `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`);
  return spawnSync(process.execPath, [path.join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", config], {
    cwd: dir,
    encoding: "utf8",
    timeout: 180_000,
  });
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}
