import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

import { ExitCode as GpucloudExitCode } from "../../src/cli/gpucloud";
import { md5Hex, startEmulator } from "../../src/emulator";
import { ExitCode, main, parseArgs, USAGE } from "../../src/emulator/cli";
import { bundleProgram } from "../support/processes";
import { call } from "./helpers";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

describe("parseArgs", () => {
  test("all flags, both --flag value and --flag=value forms", () => {
    const p = parseArgs([
      "--host",
      "::1",
      "--port=8080",
      "--user",
      "a:p:w",
      "--user=b:x",
      "--access-ttl",
      "5",
      "--refresh-ttl=9",
      "--latency",
      "20",
    ]);
    expect(p.options).toEqual({
      host: "::1",
      port: 8080,
      users: [
        { username: "a", password: "p:w", account: "a" },
        { username: "b", password: "x", account: "b" },
      ],
      accessTokenTtlSeconds: 5,
      refreshTokenTtlSeconds: 9,
      faults: { latencyMs: 20 },
    });
    expect(p.help).toBe(false);
    expect(parseArgs([]).options).toEqual({});
  });

  test("--requests-per-second and --logins-per-minute set the rate limit", () => {
    expect(parseArgs(["--requests-per-second", "20", "--logins-per-minute=10"]).options).toEqual({
      rateLimit: { requestsPerSecond: 20, loginsPerMinute: 10 },
    });
    expect(parseArgs(["--logins-per-minute", "3"]).options).toEqual({ rateLimit: { loginsPerMinute: 3 } });
    expect(() => parseArgs(["--requests-per-second", "0"])).toThrow(/--requests-per-second/);
  });

  test("--store-names: as-given, trimmed or lower-cased; anything else is refused", () => {
    expect(parseArgs(["--store-names", "trimmed"]).options).toEqual({ storeNames: "trimmed" });
    expect(parseArgs(["--store-names=lower-cased"]).options).toEqual({ storeNames: "lower-cased" });
    expect(() => parseArgs(["--store-names", "upper"])).toThrow(
      /--store-names must be one of as-given, trimmed, lower-cased \(got "upper"\)/,
    );
  });

  test("without --user, the account comes from GPUCLOUD_USERNAME/GPUCLOUD_PASSWORD (no password in argv)", () => {
    const env = { GPUCLOUD_USERNAME: "ci", GPUCLOUD_PASSWORD: "from-env-secret" };
    expect(parseArgs([], env).options.users).toEqual([{ username: "ci", password: "from-env-secret" }]);
    // --user wins over the environment (even a half-set one).
    expect(parseArgs(["--user", "a:b"], env).options.users).toEqual([{ username: "a", password: "b" }]);
    expect(parseArgs(["--user", "a:b"], { GPUCLOUD_USERNAME: "ci" }).options.users).toEqual([{ username: "a", password: "b" }]);
    // Neither variable: the server's demo account (no users option).
    expect(parseArgs([], {}).options.users).toBeUndefined();
  });

  test.each([
    [
      { GPUCLOUD_USERNAME: "ci" },
      /GPUCLOUD_USERNAME is set in this shell's environment but GPUCLOUD_PASSWORD is not: set both, or pass --user/,
    ],
    [
      { GPUCLOUD_USERNAME: "ci", GPUCLOUD_PASSWORD: "" },
      /GPUCLOUD_USERNAME is set in this shell's environment but GPUCLOUD_PASSWORD is not/,
    ],
    [{ GPUCLOUD_USERNAME: "ci", GPUCLOUD_PASSWORD_MD5: "0".repeat(32) }, /GPUCLOUD_PASSWORD_MD5 is not enough/],
    [{ GPUCLOUD_PASSWORD: "pw-secret" }, /GPUCLOUD_PASSWORD is set in this shell's environment but GPUCLOUD_USERNAME is not/],
    [{ GPUCLOUD_PASSWORD_MD5: "0".repeat(32) }, /GPUCLOUD_PASSWORD_MD5 is set in this shell's environment without GPUCLOUD_USERNAME/],
  ])("a half-set account %j fails, naming the variables (no demo fallback)", (env, message) => {
    expect(() => parseArgs([], env)).toThrow(message);
    try {
      parseArgs([], env);
    } catch (e) {
      expect(String(e)).not.toContain("pw-secret");
    }
  });

  test("main exits 3 (configuration) on a half-set account, before listening, naming this shell's environment", async () => {
    const c = capture();
    expect(await main([], { ...c.io, env: { GPUCLOUD_USERNAME: "ci" } })).toBe(3);
    expect(c.err).toEqual([
      "gpucloud-emulator: error: GPUCLOUD_USERNAME is set in this shell's environment but GPUCLOUD_PASSWORD is not: " +
        "set both, or pass --user NAME:PASSWORD",
    ]);
    expect(c.out).toEqual([]);
  });

  test.each([
    [["--port", "70000"], /--port/],
    [["--port", "abc"], /--port/],
    [["--port"], /--port needs a value/],
    [["--user", "nopassword"], /NAME:PASSWORD/],
    [["--user", ":pw"], /NAME:PASSWORD/],
    [["--user", "a:1", "--user", "a:2"], /twice/],
    [["--access-ttl", "0"], /--access-ttl/],
    [["--latency", "-5"], /--latency/],
    [["--frobnicate"], /unknown argument "--frobnicate"/],
    [["serve"], /unknown argument "serve"/],
  ])("%j is rejected", (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

describe("main (in process)", () => {
  test("--help prints usage and returns 0 without listening", async () => {
    const c = capture();
    expect(await main(["--help"], c.io)).toBe(0);
    expect(c.out.join("\n")).toBe(USAGE);
    expect(USAGE).toMatch(/--user NAME:PASSWORD/);
    const environment = USAGE.slice(USAGE.indexOf("\nEnvironment"), USAGE.indexOf("\nControl surface"));
    for (const variable of [
      "GPUCLOUD_USERNAME",
      "GPUCLOUD_PASSWORD",
      "GPUCLOUD_PASSWORD_MD5",
      "GPUCLOUD_<NAME>_USERNAME",
      "GPUCLOUD_<NAME>_PASSWORD",
    ]) {
      expect(environment).toContain(variable);
    }
  });

  test("--help's exit status table is the codes main returns, and means what the gpucloud CLI's codes mean", () => {
    const listed = [...USAGE.slice(USAGE.indexOf("\nExit status")).matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]));
    expect(listed).toEqual(Object.values(ExitCode));
    expect([ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIGURATION]).toEqual([
      GpucloudExitCode.OK,
      GpucloudExitCode.USAGE,
      GpucloudExitCode.CONFIGURATION,
    ]);
    // docs/emulator.md's table too.
    const docs = readFileSync(path.join(__dirname, "../../docs/emulator.md"), "utf8");
    expect([...docs.matchAll(/^\| (\d) \| /gm)].map((m) => Number(m[1]))).toEqual(Object.values(ExitCode));
  });

  test("--help lists every control endpoint the server routes", () => {
    const server = readFileSync(path.join(__dirname, "../../src/emulator/control.ts"), "utf8");
    const routes = [...server.matchAll(/\{ template: "(\/_emulator\/[^"]+)", pattern: [^}]*methods: \["(\w+)"\]/g)].map(
      (m) => `${m[2]} ${m[1]}`,
    );
    expect(routes.length).toBeGreaterThanOrEqual(6);
    const listed = [...USAGE.matchAll(/^ {2}(GET|POST|PUT|DELETE) +(\/_emulator\/\S+)/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(listed.sort()).toEqual(routes.sort());
  });

  test("bad arguments → message on stderr and exit code 2", async () => {
    const c = capture();
    expect(await main(["--port", "x"], c.io)).toBe(2);
    expect(c.err).toEqual([
      'gpucloud-emulator: error: --port must be an integer between 0 and 65535 (got "x")',
      "Run `gpucloud-emulator --help` for the options.",
    ]);
    expect(c.out).toEqual([]);
  });

  test("a taken port → exit code 1", async () => {
    const busy = await startEmulator();
    try {
      const c = capture();
      expect(await main(["--port", String(busy.port)], c.io)).toBe(1);
      expect(c.err.join("\n")).toMatch(/^gpucloud-emulator: error: cannot start: /);
    } finally {
      await busy.close();
    }
  });

  test("serves configured users until aborted; prints usernames, never passwords", async () => {
    const c = capture();
    const stop = new AbortController();
    const done = main(["--user", "ci:s3cret-pw", "--access-ttl", "60", "--verbose"], { ...c.io, signal: stop.signal });
    await waitFor(() => c.out.some((l) => l.startsWith("gpucloud emulator listening on ")));
    const url = c.out[0].replace("gpucloud emulator listening on ", "");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(c.out[1]).toBe("users: ci");
    const r = await call({ url }, "POST", "/authenticate/login", { body: { username: "ci", password: md5Hex("s3cret-pw") } });
    expect(r.status).toBe(200);
    const claims = JSON.parse(Buffer.from(r.json.data.access_token.split(".")[1], "base64url").toString());
    expect(claims.exp - claims.iat).toBe(60);
    expect(
      (await call({ url }, "POST", "/authenticate/login", { body: { username: "demo", password: md5Hex("demo-password") } })).status,
    ).toBe(401);
    stop.abort();
    expect(await done).toBe(0);
    expect(c.out).toContain("gpucloud emulator stopped");
    expect(c.out.some((l) => /^POST \/authenticate\/login 200 \d+ms$/.test(l))).toBe(true);
    expect(c.out.join("\n")).not.toContain("s3cret-pw");
    await expect(fetch(`${url}/flavors`)).rejects.toThrow();
  });
});

describe("compiled CLI (bundled from the sources, run as a process)", () => {
  let dir: string;
  let script: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "gpucloud-cli-"));
    script = path.join(dir, "cli.js");
    bundleProgram(path.join(__dirname, "../../src/emulator/cli.ts"), script);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("starts with a shebang", () => {
    expect(existsSync(script)).toBe(true);
    expect(readFileSync(script, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  test.each(["SIGTERM", "SIGINT"] as const)("runs until %s, then exits 0", async (signal) => {
    const env = { ...process.env };
    for (const name of ["GPUCLOUD_USERNAME", "GPUCLOUD_PASSWORD", "GPUCLOUD_PASSWORD_MD5"]) delete env[name];
    const child = spawn(process.execPath, [script, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"], env });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await waitFor(() => /listening on (\S+)/.test(stdout), 10_000);
      const url = /listening on (\S+)/.exec(stdout)![1];
      expect((await call({ url }, "GET", "/flavors")).status).toBe(401);
      child.kill(signal);
      expect(await exited).toBe(0);
      expect(stdout).toMatch(/users: demo \(the built-in demo account/);
      expect(stdout).toMatch(/stopped/);
      expect(stdout).not.toContain("demo-password");
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("bad arguments exit 2", async () => {
    const child = spawn(process.execPath, [script, "--nope"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown argument "--nope"/);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}
