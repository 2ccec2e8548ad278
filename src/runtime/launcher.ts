/**
 * The file Terraform starts: bundled to lib/assets/gpucloud-tf.js, it runs the script itself
 * (./main.ts, bundled to lib/assets/gpucloud-tf-main.js) through a V8 code cache.
 *
 * Terraform starts the script once per data source read and once per provisioner, and each start
 * compiled its 380 KiB from source: about a fifth of a run. A run that finds no usable cache
 * compiles from source as before and, when it exits with 0, stores the compiled code in
 * `.gpucloud-cache/` of its working directory (the stack folder), for the runs after it. It is
 * what Node 22's module.enableCompileCache() does for modules, done here so that Node 20 has it
 * too and the cache stays beside the state it serves instead of in a shared temp folder.
 *
 * What makes this safe:
 * - V8 checks a cache against its own version, the V8 flags and the length of the source, and
 *   compiles from source when any of them differs. The file name adds what V8 does not check:
 *   a digest of the script taken at build time, the node version and architecture, and the node
 *   options, so that runs of other versions or options keep caches of their own.
 * - The cache holds compiled code and the literals of the source, nothing a run computed: no
 *   credential, token or API answer (test/runtime/code-cache.test.ts looks for them in it).
 * - One writer at a time (the temporary file is created exclusively), renamed into place whole;
 *   any failure to read or write it only costs the compile it would have saved.
 * - GPUCLOUD_NO_CODE_CACHE=1 turns it off: no file is read or written.
 * - NODE_DEBUG=gpucloud-cache prints what it did (read, rejected, written, skipped) on stderr.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { debuglog } from "node:util";
import { setFlagsFromString } from "node:v8";
import { Script } from "node:vm";

/** sha-256 of lib/assets/gpucloud-tf-main.js (first 16 hex digits), put in by scripts/build.mjs. */
declare const __GPUCLOUD_MAIN_DIGEST__: string;

const MAIN_FILE = "gpucloud-tf-main.js";
const CODE_CACHE_DIR = ".gpucloud-cache";
const NO_CODE_CACHE_ENV = "GPUCLOUD_NO_CODE_CACHE";
const CACHE_PREFIX = "gpucloud-tf-";
const CACHE_SUFFIX = ".v8cache";
/** A temporary file this old was left by a run that died while writing it. */
const STALE_TEMP_MS = 60_000;
/** Caches of other script versions, node versions or options are removed when this old. */
const UNUSED_CACHE_MS = 7 * 24 * 3600 * 1000;

/**
 * The V8 flags that the bundle's llhttp wrapper (scripts/bundle/llhttp-liftoff.cjs) turns off for
 * its WebAssembly parser and that stay off to the end of the run (tier-up). A cache made while
 * they differ from V8's defaults would be rejected by every later run, so they are set back
 * before one is made; V8 then has no WebAssembly left to run. If a V8 version ties other flags
 * to these, the probe below notices and no cache is written.
 */
const RESTORE_DEFAULT_FLAGS = "--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering";

const debug = debuglog("gpucloud-cache");

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** The cache file for this script, node and node options, in the working directory. */
function codeCacheFile(source: string, env: NodeJS.ProcessEnv, execArgv: readonly string[]): string {
  const options = fnv1a(`${execArgv.join("\0")}\n${env.NODE_OPTIONS ?? ""}`);
  const key = `${__GPUCLOUD_MAIN_DIGEST__}-${source.length}-${process.version}-${process.arch}-${options}`;
  return path.resolve(CODE_CACHE_DIR, `${CACHE_PREFIX}${key}${CACHE_SUFFIX}`);
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * A code cache of a one-character script, made at start. V8 checks a cache against the length of
 * its source, not the text, so whether it is accepted for another one-character script (one
 * that is not in V8's in-memory compilation cache yet) tells whether V8's flags are back to
 * what they were at start.
 */
function flagProbe(): Buffer {
  return new Script("0", { filename: "gpucloud-flag-probe" }).createCachedData();
}

function flagsAsAtStart(probe: Buffer): boolean {
  return new Script("1", { filename: "gpucloud-flag-probe", cachedData: probe }).cachedDataRejected === false;
}

function removeIfOlderThan(file: string, ageMs: number): void {
  try {
    if (Date.now() - statSync(file).mtimeMs > ageMs) rmSync(file, { force: true });
  } catch {
    // Gone already, or not ours to remove.
  }
}

function removeUnusedCaches(dir: string, keep: string): void {
  for (const name of readdirSync(dir)) {
    if (name !== keep && name.startsWith(CACHE_PREFIX) && name.endsWith(CACHE_SUFFIX)) {
      removeIfOlderThan(path.join(dir, name), UNUSED_CACHE_MS);
    }
  }
}

/** Stores the script's compiled code at the end of a run (called from the "exit" event). */
function writeCodeCache(script: Script, cacheFile: string, probe: Buffer): void {
  const temp = `${cacheFile}.tmp`;
  let fd: number;
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    fd = openSync(temp, "wx");
  } catch (err) {
    // Another run is writing it; or it died doing so long ago; or the folder is read-only.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") removeIfOlderThan(temp, STALE_TEMP_MS);
    debug("not written: %s", code === "EEXIST" ? "another run is writing it" : code);
    return;
  }
  let renamed = false;
  try {
    setFlagsFromString(RESTORE_DEFAULT_FLAGS);
    if (!flagsAsAtStart(probe)) {
      debug("not written: V8's flags could not be set back to what they were at start");
      return;
    }
    writeFileSync(fd, script.createCachedData());
    closeSync(fd);
    fd = -1;
    renameSync(temp, cacheFile);
    renamed = true;
    debug("written: %s", cacheFile);
    removeUnusedCaches(path.dirname(cacheFile), path.basename(cacheFile));
  } catch (err) {
    // Only a cache: the next run compiles from source and tries again.
    debug("not written: %s", (err as Error).message);
  } finally {
    if (fd >= 0) closeSync(fd);
    if (!renamed) rmSync(temp, { force: true });
  }
}

function launch(): void {
  const mainFile = path.join(__dirname, MAIN_FILE);
  // The bundle is one function expression: (function (exports, require, module, __filename, __dirname) {...}).
  const source = readFileSync(mainFile, "utf8");
  const cacheFile = process.env[NO_CODE_CACHE_ENV] === "1" ? undefined : codeCacheFile(source, process.env, process.execArgv);
  const cachedData = cacheFile ? readIfPresent(cacheFile) : undefined;
  const script = new Script(source, { filename: mainFile, cachedData });
  const accepted = cachedData !== undefined && script.cachedDataRejected === false;
  if (cacheFile) debug("%s: %s", accepted ? "accepted" : cachedData === undefined ? "none" : "rejected", cacheFile);
  if (cacheFile && !accepted) {
    const probe = flagProbe();
    process.once("exit", (code) => {
      if (code === 0) writeCodeCache(script, cacheFile, probe);
    });
  }
  const moduleFunction = script.runInThisContext() as (...args: unknown[]) => void;
  moduleFunction.call(module.exports, module.exports, require, module, mainFile, __dirname);
}

if (require.main === module) launch();
