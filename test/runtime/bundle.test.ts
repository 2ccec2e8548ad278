/**
 * The runtime bundle (lib/assets/gpucloud-tf-main.js, started through lib/assets/gpucloud-tf.js)
 * as built: it carries only the parts of undici
 * and zod the script uses (scripts/bundle/), and what it leaves out is never needed: English
 * validation messages, https, and results larger than a pipe's buffer still work.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmulator } from "../../src/emulator";
import { runProcess, type Ran } from "../support/processes";

const ROOT = path.resolve(__dirname, "..", "..");
const BUNDLE = path.join(ROOT, "lib", "assets", "gpucloud-tf.js");
const BUNDLE_MAIN = path.join(ROOT, "lib", "assets", "gpucloud-tf-main.js");
/** Each run in a folder of its own, as in a stack folder (the launcher keeps its code cache there). */
let workDir: string;
beforeAll(() => {
  workDir = mkdtempSync(path.join(tmpdir(), "gpucloud-bundle-"));
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const METAFILE = path.join(ROOT, "build", "gpucloud-tf.meta.json");

function runBundle(command: string, env: NodeJS.ProcessEnv, stdin = "{}"): Promise<Ran> {
  return runProcess(process.execPath, [BUNDLE, command], { cwd: workDir, env: { PATH: process.env.PATH, ...env }, stdin });
}

function flavor(i: number, overrides: Record<string, unknown> = {}) {
  return {
    id: `fl-${i}`,
    name: `gpu-${i}`,
    region_name: "Test region",
    region_id: "r1",
    price: 1 + i / 100,
    cpu: 8,
    disk: 100,
    ram: 64,
    gpu: "H100",
    gpu_count: 1,
    stock_available: true,
    ...overrides,
  };
}

/** Answers login and GET /flavors with the given products; nothing else. */
function apiHandler(products: object[]): http.RequestListener {
  return (req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.method === "POST" && req.url === "/authenticate/login") {
      req.resume();
      res.end(JSON.stringify({ status: true, message: "ok", data: { access_token: "a.b.c", refresh_token: "d.e.f" } }));
    } else if (req.method === "GET" && req.url?.startsWith("/flavors")) {
      res.end(JSON.stringify({ status: true, message: "ok", data: [{ region: "Test region", products }] }));
    } else {
      res.statusCode = 404;
      res.end(JSON.stringify({ status: false, message: "not found", data: null }));
    }
  };
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

const credentials = { GPUCLOUD_USERNAME: "bundle-test", GPUCLOUD_PASSWORD: "bundle-test-pw", GPUCLOUD_TIMEOUT_SECONDS: "20" };

describe("runtime bundle", () => {
  test("carries Agent and request of undici, and of zod the mini API with only the en locale", () => {
    if (!existsSync(METAFILE)) throw new Error(`${METAFILE} is missing: run npm run build`);
    const meta = JSON.parse(readFileSync(METAFILE, "utf8"));
    // Paths from node_modules on, whether esbuild reached it directly or through a symlink, of the
    // modules that put code into the bundle (a barrel that only re-exports, such as zod's
    // locales/index.js, is an input with nothing in the output).
    const outputInputs = (Object.values(meta.outputs)[0] as { inputs: Record<string, { bytesInOutput: number }> }).inputs;
    const bundled = Object.entries(outputInputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input);
    // Modules the bundle plugin writes itself are named "<namespace>:<path they stand in for>".
    expect(bundled).toContain("llhttp-constants:node_modules/undici/lib/llhttp/constants.js");
    const inputs = bundled.filter((input) => !/^[a-z-]+:/.test(input)).map((input) => input.replace(/^.*?(?=node_modules\/)/, ""));

    expect(inputs).toContain("node_modules/undici/lib/dispatcher/agent.js");
    expect(inputs).toContain("node_modules/undici/lib/api/api-request.js");
    expect(inputs).toContain("node_modules/zod/v4/locales/en.js");
    const unwanted = inputs.filter(
      (input) =>
        /undici\/lib\/(web|mock|cache|interceptor)\//.test(input) ||
        /undici\/(index\.js|lib\/dispatcher\/client-h2\.js|lib\/global\.js|lib\/core\/tree\.js|lib\/llhttp\/constants\.js)$/.test(input) ||
        /zod\/v4\/locales\/(?!en\.js)/.test(input) ||
        // the classic (method-chaining) API: src/client/schemas.ts uses zod/mini
        /zod\/v4\/classic\//.test(input),
    );
    expect(unwanted).toEqual([]);

    const text = readFileSync(BUNDLE_MAIN, "utf8");
    // No path of the machine that built it (module names are relative to the repository).
    expect(text).not.toContain(ROOT);
    // node:http only in the shim's place: undici parses HTTP itself (scripts/bundle/undici-no-http.cjs).
    for (const builtin of ["node:http", "node:http2", "node:assert", "node:sqlite", "node:zlib"]) {
      expect(text).not.toContain(`require("${builtin}")`);
    }
    // undici's wasm parser is compiled with Liftoff only, and the flag is reset after the compile;
    // tier-up is turned off by name (V8 13, in Node 24, does not tie it to --liftoff-only).
    // It is compiled whole on V8's worker threads, not function by function on first use.
    expect(text).toContain('"--liftoff-only --no-wasm-lazy-compilation --no-wasm-tier-up --no-wasm-dynamic-tiering"');
    expect(text).toContain('"--no-liftoff-only --wasm-lazy-compilation"');
    // ... from the .wasm files beside the bundle, not from base64 inside it ("AGFzbQ" is "\0asm").
    expect(text).not.toContain("AGFzbQ");
    expect(text).toContain('"llhttp_simd.wasm"');
  });

  test("a malformed response is reported with zod's English message", async () => {
    const server = http.createServer(apiHandler([flavor(1, { price: "12" })]));
    const port = await listen(server);
    try {
      const ran = await runBundle("flavors", { ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}` });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain("data[0].products[0].price: expected number, received string");
    } finally {
      server.close();
    }
  });

  test("response header names are matched whatever their case (without undici's header-name tree)", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(401, { "CONTENT-TYPE": "Text/HTML" }).end("<html>denied</html>");
    });
    const port = await listen(server);
    try {
      const ran = await runBundle("flavors", { ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}` });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain("a non-JSON body (Text/HTML)");
    } finally {
      server.close();
    }
  });

  test("runs in a stack folder under a project whose package.json says type: module", async () => {
    // cdktf.out lies inside the user's project, so without a package.json of its own the copied
    // launcher would be loaded as an ES module there and fail at its first require().
    const project = mkdtempSync(path.join(tmpdir(), "gpucloud-esm-project-"));
    const server = http.createServer(apiHandler([flavor(5)]));
    const port = await listen(server);
    try {
      writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "esm-app", type: "module" }));
      const stack = path.join(project, "cdktf.out", "stacks", "app");
      const assets = path.join(stack, "assets", "gpucloud-runtime", "0123abcd");
      cpSync(path.dirname(BUNDLE), assets, { recursive: true });
      const ran = await runProcess(process.execPath, [path.join(assets, "gpucloud-tf.js"), "flavors"], {
        cwd: stack,
        env: { PATH: process.env.PATH, ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}` },
        stdin: "{}",
      });
      expect(ran.stderr).not.toContain("require is not defined");
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout).cheapest_id).toBe("fl-5");
    } finally {
      server.close();
      rmSync(project, { recursive: true, force: true });
    }
  });

  test("a result larger than a pipe buffer reaches stdout whole before the process exits", async () => {
    const products = Array.from({ length: 3000 }, (_, i) => flavor(i));
    const server = http.createServer(apiHandler(products));
    const port = await listen(server);
    try {
      const ran = await runBundle("flavors", { ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}` });
      expect(ran.stderr).not.toContain("error");
      expect(ran.code).toBe(0);
      expect(ran.stdout.length).toBeGreaterThan(256 * 1024);
      const result = JSON.parse(ran.stdout);
      expect(result.count).toBe("3000");
      expect(JSON.parse(result.ids)).toHaveLength(3000);
    } finally {
      server.close();
    }
  });

  test("waits for a query that arrives late and in pieces on stdin", async () => {
    const server = http.createServer(apiHandler([flavor(3, { gpu: "H100" }), flavor(4, { gpu: "A100" })]));
    const port = await listen(server);
    // The script must wait for every piece and stop reading only at the end of input.
    const query = JSON.stringify({ gpu: "H100", region_id: "r1" });
    const pieces = [query.slice(0, 5), query.slice(5, 12), query.slice(12)];
    const writer = pieces.map((p) => `sleep 0.15; printf '%s' '${p}'`).join("; ");
    try {
      const ran = await runProcess("/bin/sh", ["-c", `(${writer}) | "$NODE" "$SCRIPT" flavors`], {
        cwd: workDir,
        env: { PATH: process.env.PATH, ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}`, NODE: process.execPath, SCRIPT: BUNDLE },
      });
      expect(ran.stderr).not.toContain("error");
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout).cheapest_id).toBe("fl-3");
    } finally {
      server.close();
    }
  });

  test("a stdin that is never closed still ends the run: the watchdog fires 15 s after the budget", async () => {
    const started = Date.now();
    const child = spawn(process.execPath, [BUNDLE, "token-read"], {
      cwd: workDir,
      env: { PATH: process.env.PATH, ...credentials, GPUCLOUD_BASE_URL: "http://127.0.0.1:9", GPUCLOUD_TIMEOUT_SECONDS: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.write('{"name":'); // and never more, never closed
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.destroy();
    expect(code).toBe(1);
    expect(stderr).toContain("gave up after 16s without finishing");
    expect(Date.now() - started).toBeGreaterThanOrEqual(15_000);
  }, 40_000);

  // Costs a successful run must not pay: a second connection, node:http or node:crypto, or a
  // stack trace formatted (V8 then indexes every line of the 230 KiB bundle).
  test("a token read uses one connection, loads neither node:http nor node:crypto and formats no stack trace", async () => {
    const emulator = await startEmulator({ users: [{ username: credentials.GPUCLOUD_USERNAME, password: credentials.GPUCLOUD_PASSWORD }] });
    const preload = path.join(workDir, "report-costs.js");
    writeFileSync(
      preload,
      `let stacks = 0;
      Error.prepareStackTrace = (error, frames) => { stacks++; return [String(error), ...frames.map((f) => "    at " + f)].join("\\n"); };
      process.on("exit", () => {
        process._rawDebug("builtins: " + process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).join(","));
        process._rawDebug("stacks formatted: " + stacks);
      });`,
    );
    try {
      emulator.addToken({ name: "one-connection" });
      const ran = await runProcess(process.execPath, ["--require", preload, BUNDLE, "token-read"], {
        cwd: workDir,
        env: { PATH: process.env.PATH, ...credentials, GPUCLOUD_BASE_URL: emulator.url },
        stdin: JSON.stringify({ name: "one-connection" }),
      });
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout).name).toBe("one-connection");
      expect(emulator.stats()).toMatchObject({ requests: 2, logins: 1, connections: 1 });
      const builtins = /builtins: (.*)/.exec(ran.stderr)?.[1]?.split(",") ?? [];
      expect(builtins).toContain("NativeModule net");
      expect(builtins).not.toContain("NativeModule http");
      // md5 in plain JS, CRC-32 for the code cache: node:crypto is for the provisioners only.
      expect(builtins).not.toContain("NativeModule crypto");
      expect(ran.stderr).toContain("stacks formatted: 0");
    } finally {
      await emulator.close();
    }
  });

  test("the node:http stand-in takes the header limit from --max-http-header-size as node:http does", () => {
    const standIn = path.join(ROOT, "scripts", "bundle", "undici-no-http.cjs");
    const cases: Array<[string, string[]]> = [
      ["", []],
      ["--max-http-header-size=32768", []],
      ["--max-http-header-size 1000", []],
      ["--max-http-header-size=1000", ["--max-http-header-size=2000"]],
    ];
    for (const [nodeOptions, argv] of cases) {
      const ran = spawnSync(
        process.execPath,
        [...argv, "-e", `console.log(require(${JSON.stringify(standIn)}).maxHeaderSize, require("node:http").maxHeaderSize)`],
        { env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions }, encoding: "utf8" },
      );
      const [ours, nodes] = ran.stdout.trim().split(" ");
      expect({ nodeOptions, argv, size: ours }).toEqual({ nodeOptions, argv, size: nodes });
    }
  });

  const hasOpenssl = spawnSync("openssl", ["version"]).status === 0;
  (hasOpenssl ? test : test.skip)("https works without undici's HTTP/2 code (TLS loaded on connect)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-bundle-tls-"));
    try {
      const key = path.join(dir, "key.pem");
      const cert = path.join(dir, "cert.pem");
      const made = spawnSync("openssl", [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert,
      ]);
      expect(made.status).toBe(0);
      const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, apiHandler([flavor(7)]));
      const port = await listen(server);
      try {
        const ran = await runBundle("flavors", {
          ...credentials,
          GPUCLOUD_BASE_URL: `https://127.0.0.1:${port}`,
          NODE_EXTRA_CA_CERTS: cert,
        });
        expect(ran.stderr).not.toContain("error");
        expect(ran.code).toBe(0);
        expect(JSON.parse(ran.stdout).cheapest_id).toBe("fl-7");
      } finally {
        server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
