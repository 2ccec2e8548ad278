/**
 * The runtime bundle (lib/assets/gpucloud-tf-main.js, started through lib/assets/gpucloud-tf.js)
 * as built: plain bundles of the sources and of zod's public entry point, HTTP through node:http
 * (src/client/node-http-sender.ts), nothing of undici, no V8 flag touched; and what users see of
 * it: English validation messages, https, results larger than a pipe's buffer, a query that comes
 * late, a watchdog, a project with "type": "module".
 *
 * The script runs on SCRIPT_NODE (GPUCLOUD_TEST_NODE, else this node): .ci/run runs this file on
 * each supported Node line.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { startEmulator } from "../../src/emulator";
import { keepStderr, type Ran, runProcess, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";

const ROOT = path.resolve(__dirname, "..", "..");
const BUNDLE = path.join(ROOT, "lib", "assets", "gpucloud-tf.js");
const BUNDLE_MAIN = path.join(ROOT, "lib", "assets", "gpucloud-tf-main.js");
/** Each run in a folder of its own, as in a stack folder (the launcher keeps the compile cache there). */
let workDir: string;
beforeAll(() => {
  workDir = mkdtempSync(path.join(tmpdir(), "gpucloud-bundle-"));
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const METAFILE = path.join(ROOT, "build", "gpucloud-tf.meta.json");
/** A warning Node prints on its own, e.g. `(node:123) ExperimentalWarning: ...` or an unknown flag. */
const NODE_NOTICE = /^\(node:\d+\)|^Warning:|unrecognized flag|bad option/im;

async function runBundle(command: string, env: NodeJS.ProcessEnv, stdin = "{}"): Promise<Ran> {
  const ran = await runProcess(SCRIPT_NODE, [BUNDLE, command], { cwd: workDir, env: { PATH: SCRIPT_PATH, ...env }, stdin });
  expect(ran.stderr).not.toMatch(NODE_NOTICE);
  return ran;
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
  test("carries no undici, of zod the mini API with only the en locale, and changes no V8 flag", () => {
    if (!existsSync(METAFILE)) throw new Error(`${METAFILE} is missing: run npm run build`);
    const meta = JSON.parse(readFileSync(METAFILE, "utf8"));
    // Paths from node_modules on, of the modules that put code into the bundle (a barrel that
    // only re-exports, such as zod's locales/index.js, is an input with nothing in the output).
    const outputInputs = (Object.values(meta.outputs)[0] as { inputs: Record<string, { bytesInOutput: number }> }).inputs;
    const inputs = Object.entries(outputInputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input.replace(/^.*?(?=node_modules\/)/, ""));
    // Only files of this repository and of zod, each from where a plain bundle finds it.
    expect(inputs.filter((input) => !input.startsWith("src/") && !input.startsWith("node_modules/zod/"))).toEqual([]);
    expect(inputs).toContain("src/client/node-http-sender.ts");
    expect(inputs).toContain("node_modules/zod/v4/locales/en.js");
    // zod's other locales and its classic (method-chaining) API: src/client/schemas.ts uses zod/mini.
    expect(inputs.filter((input) => /zod\/v4\/locales\/(?!en\.js)|zod\/v4\/classic\//.test(input))).toEqual([]);

    for (const file of [BUNDLE, BUNDLE_MAIN]) {
      const text = readFileSync(file, "utf8");
      // No path of the machine that built it.
      expect(text).not.toContain(ROOT);
      expect(text).not.toContain("setFlagsFromString");
      expect(text).not.toContain('require("node:v8")');
      expect(text).not.toContain('require("v8")');
    }
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

  test("response header names are matched whatever their case", async () => {
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
      const ran = await runProcess(SCRIPT_NODE, [path.join(assets, "gpucloud-tf.js"), "flavors"], {
        cwd: stack,
        env: { PATH: SCRIPT_PATH, ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}` },
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
        env: { PATH: SCRIPT_PATH, ...credentials, GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}`, NODE: SCRIPT_NODE, SCRIPT: BUNDLE },
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
    const child = spawn(SCRIPT_NODE, [BUNDLE, "flavors"], {
      cwd: workDir,
      env: { PATH: SCRIPT_PATH, ...credentials, GPUCLOUD_BASE_URL: "http://127.0.0.1:9", GPUCLOUD_TIMEOUT_SECONDS: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.write('{"gpu":'); // and never more, never closed
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.destroy();
    keepStderr(stderr);
    expect(code).toBe(1);
    expect(stderr).toContain("gave up after 16s without finishing");
    expect(Date.now() - started).toBeGreaterThanOrEqual(15_000);
  }, 40_000);

  // What a plan's stack read must not cost: a second connection, or node:https and node:tls where the
  // API is plain http.
  test("a stack's read of its tokens uses one connection, loads no node:https, and Node prints nothing", async () => {
    const emulator = await startEmulator({ users: [{ username: credentials.GPUCLOUD_USERNAME, password: credentials.GPUCLOUD_PASSWORD }] });
    const preload = path.join(workDir, "report-builtins.js");
    const report = path.join(workDir, "builtins.txt");
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).join(",")));`,
    );
    try {
      const token = emulator.addToken({ name: "one-connection" });
      const ran = await runProcess(SCRIPT_NODE, ["--require", preload, BUNDLE, "stack-read"], {
        cwd: workDir,
        env: { PATH: SCRIPT_PATH, ...credentials, GPUCLOUD_BASE_URL: emulator.url },
        stdin: JSON.stringify({ "a1.name": "one-connection", workspace: "default" }),
      });
      expect(ran.stderr).not.toMatch(NODE_NOTICE);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({ "a1.id": token.id, "a1.in_sync": "true" });
      expect(emulator.stats()).toMatchObject({ logins: 1, connections: 1 });
      const builtins = readFileSync(report, "utf8").split(",");
      expect(builtins).toContain("NativeModule http");
      for (const unwanted of ["NativeModule https", "NativeModule tls"]) expect(builtins).not.toContain(unwanted);
    } finally {
      await emulator.close();
    }
  });

  const hasOpenssl = spawnSync("openssl", ["version"]).status === 0;
  (hasOpenssl ? test : test.skip)("https works (node:https loaded for an https: URL only)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-bundle-tls-"));
    try {
      const key = path.join(dir, "key.pem");
      const cert = path.join(dir, "cert.pem");
      const made = spawnSync("openssl", [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        key,
        "-out",
        cert,
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
