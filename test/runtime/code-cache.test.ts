/**
 * Node's compile cache as the launcher turns it on (src/runtime/launcher.ts), run as Terraform
 * runs it: the built lib/assets/gpucloud-tf.js in a process of its own, in a working folder of its
 * own, on SCRIPT_NODE (.ci/run runs this file on each supported Node line). What is Node's (the
 * file format, its checks) is not tested here; what this library promises about it is.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { md5Hex, type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import { nodeOwnLines, type Ran, runProcess, SCRIPT_NODE } from "../support/processes";

const ASSETS = path.resolve(__dirname, "..", "..", "lib", "assets");
const LAUNCHER = path.join(ASSETS, "gpucloud-tf.js");
const CACHE_DIR = ".gpucloud-cache";
const account = { username: "cache-user", password: "cache-password-5e1f" };
const TOKEN_NAME = "cache-token";
const QUERY = JSON.stringify({ "k1.name": TOKEN_NAME });
/** What Node prints about its compile cache with NODE_DEBUG_NATIVE=COMPILE_CACHE when a run used it. */
const ACCEPTED = /cache for (CommonJS )?\S*gpucloud-tf-main\.js was accepted/;

let emulator: RunningEmulator;
let tokenValue: string;
const folders: string[] = [];
/** Whether SCRIPT_NODE has module.enableCompileCache (Node 22.8 and later). */
let hasCompileCache: boolean;

beforeAll(async () => {
  emulator = await startEmulator({ users: [account] });
  tokenValue = emulator.addToken({ name: TOKEN_NAME, description: "for the cache test" }).token;
  const probe = await runProcess(SCRIPT_NODE, ["-p", 'typeof require("node:module").enableCompileCache'], { env: {} });
  hasCompileCache = probe.stdout.trim() === "function";
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

function run(cwd: string, extraEnv: NodeJS.ProcessEnv = {}, launcher = LAUNCHER): Promise<Ran> {
  const env = { ...credentialsEnv(emulator, account), ...extraEnv };
  return runProcess(SCRIPT_NODE, [launcher, "stack-read"], { cwd, env, stdin: QUERY });
}

async function runOk(cwd: string, extraEnv: NodeJS.ProcessEnv = {}, launcher = LAUNCHER): Promise<Ran> {
  const ran = await run(cwd, extraEnv, launcher);
  expect(ran.stderr).not.toContain("error");
  expect(nodeOwnLines(ran.stderr)).not.toMatch(/^\(node:\d+\)|warning/im);
  expect(ran.code).toBe(0);
  expect(JSON.parse(ran.stdout)["k1.token"]).toBe(tokenValue);
  return ran;
}

/** Every file under the cache folder (none when it does not exist). */
function cacheFiles(cwd: string): string[] {
  try {
    return readdirSync(path.join(cwd, CACHE_DIR), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name));
  } catch {
    return [];
  }
}

describe("compile cache of the runtime script", () => {
  test("the first run stores it in .gpucloud-cache of the working folder, the next run uses it", async () => {
    const cwd = folder();
    await runOk(cwd);
    if (!hasCompileCache) {
      expect(cacheFiles(cwd)).toEqual([]);
      return;
    }
    expect(cacheFiles(cwd).length).toBeGreaterThan(0);
    const later = await runOk(cwd, { NODE_DEBUG_NATIVE: "COMPILE_CACHE" });
    expect(later.stderr).toMatch(ACCEPTED);
  });

  test("holds no password, no md5 of it, no access, refresh or API token", async () => {
    const cwd = folder();
    await runOk(cwd);
    await runOk(cwd);
    const files = cacheFiles(cwd);
    if (hasCompileCache) expect(files.length).toBeGreaterThan(0);
    // The emulator's access, refresh and API tokens are JWTs ("eyJ", base64url, a dot ...). The
    // script's source has none (its redaction pattern names the prefix, not a token).
    const jwt = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/;
    expect(readFileSync(path.join(ASSETS, "gpucloud-tf-main.js"), "utf8")).not.toMatch(jwt);
    for (const file of files) {
      const cache = readFileSync(file);
      for (const encoding of ["latin1", "utf16le"] as const) expect(cache.toString(encoding)).not.toMatch(jwt);
      for (const secret of [account.password, md5Hex(account.password), tokenValue]) {
        for (const encoding of ["utf8", "utf16le"] as const) expect(cache.includes(Buffer.from(secret, encoding))).toBe(false);
      }
    }
  });

  test("a damaged cache costs nothing but the compile", async () => {
    const cwd = folder();
    await runOk(cwd);
    for (const file of cacheFiles(cwd)) {
      const bytes = readFileSync(file);
      writeFileSync(file, bytes.fill(0x5a, bytes.length >> 2));
    }
    await runOk(cwd);
    await runOk(cwd);
  });

  test("a script edited to the same length runs as edited, not as cached", async () => {
    const assets = folder();
    cpSync(ASSETS, assets, { recursive: true });
    const cwd = folder();
    const launcher = path.join(assets, "gpucloud-tf.js");
    expect((await runOk(cwd, {}, launcher)).stderr).toContain("gpucloud: logged in as");
    const main = path.join(assets, "gpucloud-tf-main.js");
    const source = readFileSync(main, "utf8");
    expect(source).toContain("logged in as ");
    writeFileSync(main, source.replace("logged in as ", "LOGGED-IN-AS "));
    expect((await runOk(cwd, {}, launcher)).stderr).toContain("gpucloud: LOGGED-IN-AS");
  });

  test("GPUCLOUD_NO_CODE_CACHE=1 reads and writes nothing", async () => {
    const cwd = folder();
    await runOk(cwd, { GPUCLOUD_NO_CODE_CACHE: "1" });
    expect(readdirSync(cwd)).not.toContain(CACHE_DIR);
  });

  test("a folder it cannot write to costs nothing but the cache, and Node says nothing of it", async () => {
    const cwd = folder();
    // A file where the folder would be: mkdir fails for root too (a read-only mode would not).
    writeFileSync(path.join(cwd, CACHE_DIR), "not a folder");
    await runOk(cwd);
    expect(readFileSync(path.join(cwd, CACHE_DIR), "utf8")).toBe("not a folder");
  });

  test("runs started together all succeed, and the next one uses the cache", async () => {
    const cwd = folder();
    await Promise.all(Array.from({ length: 6 }, () => runOk(cwd)));
    if (!hasCompileCache) return;
    expect((await runOk(cwd, { NODE_DEBUG_NATIVE: "COMPILE_CACHE" })).stderr).toMatch(ACCEPTED);
  });
});
