/**
 * The launcher's V8 code cache (src/runtime/launcher.ts), run as Terraform runs it: the built
 * lib/assets/gpucloud-tf.js in a process of its own, in a working folder of its own.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { md5Hex, startEmulator, type RunningEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import { runProcess, type Ran } from "../support/processes";

const LAUNCHER = path.resolve(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");
const MAIN = path.resolve(__dirname, "..", "..", "lib", "assets", "gpucloud-tf-main.js");
const CACHE_DIR = ".gpucloud-cache";
const account = { username: "cache-user", password: "cache-password-5e1f" };
const TOKEN_NAME = "cache-token";

let emulator: RunningEmulator;
let tokenValue: string;
const folders: string[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ users: [account] });
  tokenValue = emulator.addToken({ name: TOKEN_NAME, description: "for the cache test" }).token;
});
afterAll(async () => {
  await emulator.close();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-code-cache-"));
  folders.push(dir);
  return dir;
}

function run(cwd: string, extraEnv: NodeJS.ProcessEnv = {}, name = TOKEN_NAME): Promise<Ran> {
  const env = { ...credentialsEnv(emulator, account), ...extraEnv };
  return runProcess(process.execPath, [LAUNCHER, "token-read"], { cwd, env, stdin: JSON.stringify({ name }) });
}

async function runOk(cwd: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
  const ran = await run(cwd, extraEnv);
  expect(ran.stderr).not.toContain("error");
  expect(ran.code).toBe(0);
  expect(JSON.parse(ran.stdout).token).toBe(tokenValue);
}

/** Names in the cache folder (none when it does not exist). */
function cacheEntries(cwd: string): string[] {
  try {
    return readdirSync(path.join(cwd, CACHE_DIR)).sort();
  } catch {
    return [];
  }
}

function onlyCacheFile(cwd: string): string {
  const entries = cacheEntries(cwd);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatch(/^gpucloud-tf-[0-9a-f]{16}-\d+-token-read-v\d+\.\d+\.\d+-[a-z0-9]+-[0-9a-f]{8}\.v8cache$/);
  return path.join(cwd, CACHE_DIR, entries[0]!);
}

describe("code cache of the runtime script", () => {
  test("the first run stores one; later runs read it and leave it as it is", async () => {
    const cwd = folder();
    await runOk(cwd);
    const file = onlyCacheFile(cwd);
    const first = statSync(file);
    expect(first.size).toBeGreaterThan(50 * 1024);

    // A cache that V8 rejected would be written again (a new file renamed into place).
    for (let i = 0; i < 2; i++) {
      const ran = await run(cwd, { NODE_DEBUG: "gpucloud-cache" });
      expect(ran.code).toBe(0);
      expect(ran.stderr).toMatch(/GPUCLOUD-CACHE \d+: accepted: /);
      expect(ran.stderr).not.toContain("written");
    }
    const later = statSync(file);
    expect(later.ino).toBe(first.ino);
    expect(later.mtimeMs).toBe(first.mtimeMs);
    expect(cacheEntries(cwd)).toEqual([path.basename(file)]);
  });

  test("holds no password, no md5 of it, no access, refresh or API token", async () => {
    const cwd = folder();
    await runOk(cwd);
    const cache = readFileSync(onlyCacheFile(cwd));
    // The emulator's access, refresh and API tokens are JWTs ("eyJ", base64url, a dot ...). The
    // script's source has none (its redaction pattern names the prefix, not a token), so none
    // can come into the cache from there.
    const jwt = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/;
    expect(readFileSync(MAIN, "utf8")).not.toMatch(jwt);
    for (const encoding of ["latin1", "utf16le"] as const) expect(cache.toString(encoding)).not.toMatch(jwt);
    for (const secret of [account.password, md5Hex(account.password), tokenValue]) {
      for (const encoding of ["utf8", "utf16le"] as const) {
        expect(cache.includes(Buffer.from(secret, encoding))).toBe(false);
      }
    }
  });

  test.each([
    ["every byte", (bytes: Buffer) => bytes.fill(0x5a)],
    // V8 checks only its header: damage after it would crash the run (and every later one).
    ["64 bytes in the middle of the compiled code", (bytes: Buffer) => bytes.fill(0, bytes.length >> 1, (bytes.length >> 1) + 64)],
    ["the last byte", (bytes: Buffer) => bytes.fill(bytes[bytes.length - 1]! ^ 0xff, bytes.length - 1)],
  ])("a cache damaged in %s is compiled around and replaced", async (_what, damage) => {
    const cwd = folder();
    await runOk(cwd);
    const file = onlyCacheFile(cwd);
    const damaged = damage(readFileSync(file));
    writeFileSync(file, damaged);
    const ran = await run(cwd, { NODE_DEBUG: "gpucloud-cache" });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).token).toBe(tokenValue);
    expect(ran.stderr).toMatch(/GPUCLOUD-CACHE \d+: damaged/);
    expect(ran.stderr).toMatch(/GPUCLOUD-CACHE \d+: written: /);
    expect(readFileSync(file).equals(damaged)).toBe(false);
    expect(cacheEntries(cwd)).toEqual([path.basename(file)]);
    const after = await run(cwd, { NODE_DEBUG: "gpucloud-cache" });
    expect(after.stderr).toMatch(/GPUCLOUD-CACHE \d+: accepted: /);
  });

  test("a script edited to the same length runs as edited, not as cached", async () => {
    // A copy of the runtime folder, whose script is then changed without changing its length.
    const assets = folder();
    for (const name of readdirSync(path.dirname(LAUNCHER))) writeFileSync(path.join(assets, name), readFileSync(path.join(path.dirname(LAUNCHER), name)));
    const cwd = folder();
    const runCopy = () =>
      runProcess(process.execPath, [path.join(assets, "gpucloud-tf.js"), "token-read"], {
        cwd,
        env: { ...credentialsEnv(emulator, account), NODE_DEBUG: "gpucloud-cache" },
        stdin: JSON.stringify({ name: TOKEN_NAME }),
      });
    expect((await runCopy()).stderr).toContain("gpucloud: logged in as");
    const main = path.join(assets, "gpucloud-tf-main.js");
    const source = readFileSync(main, "utf8");
    expect(source).toContain("logged in as ");
    writeFileSync(main, source.replace("logged in as ", "LOGGED-IN-AS "));
    const ran = await runCopy();
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(/GPUCLOUD-CACHE \d+: damaged or made from another source/);
    expect(ran.stderr).toContain("gpucloud: LOGGED-IN-AS");
  });

  test("each command has a cache of its own", async () => {
    const cwd = folder();
    await runOk(cwd);
    const flavors = await runProcess(process.execPath, [LAUNCHER, "flavors"], { cwd, env: credentialsEnv(emulator, account), stdin: "{}" });
    expect(flavors.code).toBe(0);
    const entries = cacheEntries(cwd);
    expect(entries).toHaveLength(2);
    expect(entries.filter((e) => e.includes("-flavors-"))).toHaveLength(1);
    expect(entries.filter((e) => e.includes("-token-read-"))).toHaveLength(1);
  });

  test("a run that fails stores none", async () => {
    const cwd = folder();
    const ran = await run(cwd, {}, "no-such-token");
    expect(ran.code).toBe(1);
    expect(cacheEntries(cwd)).toEqual([]);
  });

  test(`GPUCLOUD_NO_CODE_CACHE=1 reads and writes nothing`, async () => {
    const cwd = folder();
    await runOk(cwd, { GPUCLOUD_NO_CODE_CACHE: "1" });
    expect(readdirSync(cwd)).not.toContain(CACHE_DIR);
  });

  test("on a Node without zlib.crc32 (before 20.15) it runs without a cache", async () => {
    const cwd = folder();
    const preload = path.join(cwd, "no-crc32.js");
    writeFileSync(preload, 'delete require("node:zlib").crc32;');
    const ran = await runProcess(process.execPath, ["--require", preload, LAUNCHER, "token-read"], {
      cwd,
      env: credentialsEnv(emulator, account),
      stdin: JSON.stringify({ name: TOKEN_NAME }),
    });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).token).toBe(tokenValue);
    expect(readdirSync(cwd)).not.toContain(CACHE_DIR);
  });

  test("a folder it cannot write to costs nothing but the cache", async () => {
    const cwd = folder();
    // A file where the folder would be: mkdir fails for root too (a read-only mode would not).
    writeFileSync(path.join(cwd, CACHE_DIR), "not a folder");
    await runOk(cwd);
    expect(readFileSync(path.join(cwd, CACHE_DIR), "utf8")).toBe("not a folder");
  });

  test("other node options get a cache of their own", async () => {
    const cwd = folder();
    await runOk(cwd);
    await runOk(cwd, { NODE_OPTIONS: "--max-old-space-size=512" });
    const entries = cacheEntries(cwd);
    expect(entries).toHaveLength(2);
    // Same script, node and architecture; only the options part of the name differs.
    const stem = (name: string) => name.replace(/-[0-9a-f]{8}\.v8cache$/, "");
    expect(stem(entries[0]!)).toBe(stem(entries[1]!));
  });

  test("runs started together all succeed and leave one cache and no temporary file", async () => {
    const cwd = folder();
    await Promise.all(Array.from({ length: 6 }, () => runOk(cwd)));
    onlyCacheFile(cwd);
  });

  test("a temporary file left by a run that died is removed, and the next run writes the cache", async () => {
    const probe = folder();
    await runOk(probe);
    const name = path.basename(onlyCacheFile(probe));

    const cwd = folder();
    const temp = path.join(cwd, CACHE_DIR, `${name}.tmp`);
    mkdirSync(path.join(cwd, CACHE_DIR));
    writeFileSync(temp, "half written");
    // A fresh temporary file is another run's: left alone, no cache written by this run.
    await runOk(cwd);
    expect(cacheEntries(cwd)).toEqual([`${name}.tmp`]);
    // An old one is a dead run's: removed, and the run after writes the cache.
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(temp, old, old);
    await runOk(cwd);
    expect(cacheEntries(cwd)).toEqual([]);
    await runOk(cwd);
    expect(cacheEntries(cwd)).toEqual([name]);
  });
});
