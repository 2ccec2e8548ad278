/**
 * The file Terraform starts: bundled to lib/assets/gpucloud-tf.js, it runs the script itself
 * (./main.ts, bundled to lib/assets/gpucloud-tf-main.js) through a V8 code cache.
 *
 * Terraform starts the script once per data source read and once per provisioner, and each start
 * compiled its 230 KiB from source: about a fifth of a run. A run that finds no usable cache
 * compiles from source as before and, when it exits with 0, stores the compiled code in
 * `.gpucloud-cache/` of its working directory (the stack folder), for the runs after it. It is
 * what Node 22's module.enableCompileCache() does for modules, done here so that Node 20 has it
 * too and the cache stays beside the state it serves instead of in a shared temp folder.
 *
 * What makes this safe:
 * - A cache file starts with a CRC-32 of the script's source and of the compiled code, checked
 *   before V8 sees it: V8 itself checks only its own version, its flags and the source's length,
 *   and a release build runs damaged code as it finds it (a crash in every later run) or the old
 *   code of a source edited to the same length. A checksum against damage and edits, not a
 *   defence against someone who can write the stack folder (they could change the script
 *   itself); CRC-32 from node:zlib because node:crypto would cost every run 1.5 to 2 ms to load
 *   (zlib 0.4 ms, and the checksum of half a MiB 0.1 ms). Where node:zlib has no crc32 (Node
 *   before 20.15), no cache is read or written.
 * - The file name holds what must match for the compiled code to be of any use: a digest of the
 *   script taken at build time, the command (each command compiles other functions), the node
 *   version and architecture, and the node options.
 * - The cache holds compiled code and the literals of the source, nothing a run computed: no
 *   credential, token or API answer (test/runtime/code-cache.test.ts looks for them in it).
 * - One writer at a time (the temporary file is created exclusively), renamed into place whole;
 *   any failure to read or write it only costs the compile it would have saved.
 * - GPUCLOUD_NO_CODE_CACHE=1 turns it off: no file is read or written.
 * - NODE_DEBUG=gpucloud-cache prints what it did (read, rejected, written, skipped) on stderr.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { debuglog } from "node:util";
import { setFlagsFromString } from "node:v8";
import { Script } from "node:vm";
import * as zlib from "node:zlib";

/** sha-256 of lib/assets/gpucloud-tf-main.js (first 16 hex digits), put in by scripts/build.mjs. */
declare const __GPUCLOUD_MAIN_DIGEST__: string;
/**
 * The V8 flags that set back what the bundle's llhttp wrapper (scripts/bundle/llhttp-liftoff.cjs)
 * turned off for its WebAssembly parser and left off to the end of the run (tier-up); put in by
 * scripts/build.mjs from LLHTTP_V8_FLAGS.restore in scripts/bundle/runtime-plugin.mjs. A cache
 * made while they differ from V8's defaults would be rejected by every later run, so they are set
 * back before one is made; V8 then has no WebAssembly left to run. If a V8 version ties other
 * flags to these, the probe below notices and no cache is written.
 */
declare const __GPUCLOUD_RESTORE_V8_FLAGS__: string;

const MAIN_FILE = "gpucloud-tf-main.js";
const CODE_CACHE_DIR = ".gpucloud-cache";
const NO_CODE_CACHE_ENV = "GPUCLOUD_NO_CODE_CACHE";
const CACHE_PREFIX = "gpucloud-tf-";
const CACHE_SUFFIX = ".v8cache";
const TEMP_SUFFIX = ".tmp";
/** The file format: these bytes, then the checksum (CRC-32, big-endian), then V8's cached data. */
const MAGIC = Buffer.from("gpucloud-v8cache-2\n");
const DIGEST_BYTES = 4;
/** A temporary file this old was left by a run that died while writing it. */
const STALE_TEMP_MS = 60_000;
/** Caches of other script versions, commands, node versions or options, written this long ago, are removed. */
const UNUSED_CACHE_MS = 7 * 24 * 3600 * 1000;

const debug = debuglog("gpucloud-cache");

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** The cache file for this script, command, node and node options, in the working directory. */
function codeCacheFile(source: Buffer, command: string): string {
  const options = fnv1a(`${process.execArgv.join("\0")}\n${process.env.NODE_OPTIONS ?? ""}`);
  const commandPart = /^[a-z-]{1,40}$/.test(command) ? command : fnv1a(command);
  const key = `${__GPUCLOUD_MAIN_DIGEST__}-${source.length}-${commandPart}-${process.version}-${process.arch}-${options}`;
  return path.resolve(CODE_CACHE_DIR, `${CACHE_PREFIX}${key}${CACHE_SUFFIX}`);
}

/** node:zlib's crc32 (Node 20.15 and later), or undefined. */
const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

function digestOf(source: Buffer, cachedData: Buffer): Buffer {
  const digest = Buffer.alloc(DIGEST_BYTES);
  digest.writeUInt32BE(crc32!(cachedData, crc32!(source)) >>> 0);
  return digest;
}

/** The cached data in `file` if it is there and whole and made from `source`, else undefined. */
function readCodeCache(file: string, source: Buffer): { data?: Buffer; state: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return { state: "none" };
  }
  const head = MAGIC.length + DIGEST_BYTES;
  if (bytes.length <= head || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { state: "damaged" };
  const data = bytes.subarray(head);
  if (!digestOf(source, data).equals(bytes.subarray(MAGIC.length, head))) return { state: "damaged or made from another source" };
  return { data, state: "read" };
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

/** Other caches written long ago, and temporary files of runs that died. */
function removeUnusedFiles(dir: string, keep: string): void {
  for (const name of readdirSync(dir)) {
    if (name === keep || !name.startsWith(CACHE_PREFIX)) continue;
    if (name.endsWith(CACHE_SUFFIX)) removeIfOlderThan(path.join(dir, name), UNUSED_CACHE_MS);
    else if (name.endsWith(TEMP_SUFFIX)) removeIfOlderThan(path.join(dir, name), STALE_TEMP_MS);
  }
}

/** Stores the script's compiled code at the end of a run (called from the "exit" event). */
function writeCodeCache(script: Script, source: Buffer, cacheFile: string, replace: boolean, probe: Buffer): void {
  // Another run started with this one may have written it meanwhile.
  if (!replace && existsSync(cacheFile)) {
    debug("not written: another run wrote it");
    return;
  }
  const temp = `${cacheFile}${TEMP_SUFFIX}`;
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
    setFlagsFromString(__GPUCLOUD_RESTORE_V8_FLAGS__);
    if (!flagsAsAtStart(probe)) {
      debug("not written: V8's flags could not be set back to what they were at start");
      return;
    }
    const data = script.createCachedData();
    writeFileSync(fd, Buffer.concat([MAGIC, digestOf(source, data), data]));
    const written = fd;
    fd = -1; // closed below even if the close fails: a second close could hit another file
    closeSync(written);
    renameSync(temp, cacheFile);
    renamed = true;
    debug("written: %s", cacheFile);
    removeUnusedFiles(path.dirname(cacheFile), path.basename(cacheFile));
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
  const sourceBytes = readFileSync(mainFile);
  const cacheFile = process.env[NO_CODE_CACHE_ENV] === "1" || crc32 === undefined ? undefined : codeCacheFile(sourceBytes, process.argv[2] ?? "");
  const cached = cacheFile ? readCodeCache(cacheFile, sourceBytes) : { state: "off" };
  const script = new Script(sourceBytes.toString("utf8"), { filename: mainFile, cachedData: cached.data });
  const accepted = cached.data !== undefined && script.cachedDataRejected === false;
  if (cacheFile) {
    debug("%s: %s", accepted ? "accepted" : cached.data !== undefined ? "rejected by V8" : cached.state, cacheFile);
    if (!accepted) {
      const probe = flagProbe();
      const replace = cached.state !== "none";
      process.once("exit", (code) => {
        if (code !== 0) return;
        try {
          writeCodeCache(script, sourceBytes, cacheFile, replace, probe);
        } catch (err) {
          // Nothing of a cache may change how the run ends.
          debug("not written: %s", (err as Error).message);
        }
      });
    }
  }
  const moduleFunction = script.runInThisContext() as (...args: unknown[]) => void;
  moduleFunction.call(module.exports, module.exports, require, module, mainFile, __dirname);
}

if (require.main === module) launch();
