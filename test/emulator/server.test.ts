import * as http from "node:http";

import { md5Hex, startEmulator } from "../../src/emulator";
import { call, login } from "./helpers";

test("url has no trailing slash and carries the port; an explicit port is honoured", async () => {
  const a = await startEmulator();
  const port = a.port;
  expect(a.url).toBe(`http://127.0.0.1:${port}`);
  await a.close();
  const b = await startEmulator({ port });
  try {
    expect(b.port).toBe(port);
    expect((await call(b, "GET", "/flavors")).status).toBe(401);
  } finally {
    await b.close();
  }
});

test("a taken port makes startEmulator reject", async () => {
  const a = await startEmulator();
  try {
    await expect(startEmulator({ port: a.port })).rejects.toThrow(/EADDRINUSE/);
  } finally {
    await a.close();
  }
});

test("unknown routes → 404 envelope; every JSON response is an envelope", async () => {
  const emu = await startEmulator();
  try {
    for (const path of ["/", "/nope", "/api-tokens/", "/flavors/x", "/api-tokens/a/b", "//emulator.invalid/flavors"]) {
      const r = await call(emu, "GET", path);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      expect(Object.keys(r.json).sort()).toEqual(["data", "message", "status"]);
      expect(r.json.status).toBe(false);
    }
  } finally {
    await emu.close();
  }
});

test("a body over 1 MiB → 413", async () => {
  const emu = await startEmulator();
  try {
    const r = await call(emu, "POST", "/authenticate/login", { rawBody: `{"username":"${"a".repeat(1_100_000)}"}` });
    expect(r.status).toBe(413);
    expect(r.json.status).toBe(false);
  } finally {
    await emu.close();
  }
});

test("request log: one line per request with method, path, status, ms; no secrets", async () => {
  const lines: string[] = [];
  const emu = await startEmulator({ log: (l) => lines.push(l) });
  try {
    const s = await login(emu);
    const created = await call(emu, "POST", "/api-tokens", { headers: s.headers, body: { name: "ci" } });
    await call(emu, "GET", "/api-tokens?limit=2&access_token=leaked-value", { headers: s.headers });
    emu.setFaults({ dropConnectionRate: 1 });
    await fetch(`${emu.url}/flavors`).catch(() => undefined);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^POST \/authenticate\/login 200 \d+ms$/);
    expect(lines[1]).toMatch(/^POST \/api-tokens 200 \d+ms$/);
    expect(lines[2]).toMatch(/^GET \/api-tokens\?limit=2&access_token=\*\*\* 200 \d+ms$/);
    expect(lines[3]).toMatch(/^GET \/flavors - connection dropped/);
    const all = lines.join("\n");
    for (const secret of [s.access, s.refresh, created.json.data.token, md5Hex("demo-password"), "leaked-value"]) {
      expect(all).not.toContain(secret);
    }
  } finally {
    await emu.close();
  }
});

test("close() with an idle keep-alive connection resolves promptly and is idempotent", async () => {
  const emu = await startEmulator();
  const agent = new http.Agent({ keepAlive: true });
  try {
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(`${emu.url}/flavors`, { agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        })
        .on("error", reject);
    });
    expect(status).toBe(401);
    expect(Object.keys(agent.freeSockets).length).toBe(1);
    const t0 = performance.now();
    await emu.close();
    await emu.close();
    expect(performance.now() - t0).toBeLessThan(1000);
    await expect(fetch(`${emu.url}/flavors`)).rejects.toThrow();
  } finally {
    agent.destroy();
  }
});

test("close() during a delayed response does not wait for it", async () => {
  const emu = await startEmulator({ faults: { latencyMs: 30_000 } });
  const pending = fetch(`${emu.url}/flavors`).then(
    (r) => r.status,
    () => "failed",
  );
  await new Promise((r) => setTimeout(r, 100));
  const t0 = performance.now();
  await emu.close();
  expect(performance.now() - t0).toBeLessThan(1000);
  expect(await pending).toBe("failed");
});

test("fetch keep-alive connections do not hold close() either", async () => {
  const emu = await startEmulator();
  for (let i = 0; i < 3; i++) expect((await call(emu, "GET", "/flavors")).status).toBe(401);
  const t0 = performance.now();
  await emu.close();
  expect(performance.now() - t0).toBeLessThan(1000);
});
