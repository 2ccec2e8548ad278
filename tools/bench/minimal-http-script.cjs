#!/usr/bin/env node
// The floor that `npm run bench:script` compares the bundled script against: the same requests
// with nothing but node:http, node:crypto and JSON. No validation, no retries, no redaction:
// it is a yardstick for the one-process-per-read model, not something to ship.
//
//   node minimal-http-script.cjs stack-read (stdin {"<key>.name": ...}) login + GET /api-tokens
//   node minimal-http-script.cjs flavors      (stdin {"region_id": ...})  login + GET /flavors
//
// Reads GPUCLOUD_BASE_URL, GPUCLOUD_USERNAME and GPUCLOUD_PASSWORD like the real script.
"use strict";
const http = require("node:http");
const { createHash } = require("node:crypto");

const agent = new http.Agent({ keepAlive: true });

function call(method, url, headers, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, { method, agent, headers: payload ? { ...headers, "content-type": "application/json" } : headers });
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (res.statusCode !== 200 || parsed.status !== true) reject(new Error(`${method} ${url}: ${res.statusCode}`));
        else resolve(parsed);
      });
    });
    req.end(payload);
  });
}

function readStdin() {
  return new Promise((resolve) => {
    const chunks = [];
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

async function main() {
  const command = process.argv[2];
  const query = JSON.parse((await readStdin()) || "{}");
  const base = process.env.GPUCLOUD_BASE_URL;
  const password = createHash("md5").update(process.env.GPUCLOUD_PASSWORD, "utf8").digest("hex");
  const login = await call("POST", `${base}/authenticate/login`, {}, { username: process.env.GPUCLOUD_USERNAME, password });
  const auth = { authorization: `Bearer ${login.data.access_token}`, "refresh-token": login.data.refresh_token };

  let result;
  if (command === "stack-read") {
    const list = await call("GET", `${base}/api-tokens?limit=100&offset=0`, auth);
    result = {};
    for (const [field, name] of Object.entries(query)) {
      const key = field.slice(0, -".name".length);
      const token = list.data.find((t) => t.name === name);
      Object.assign(result, {
        [`${key}.id`]: token?.id ?? "",
        [`${key}.name`]: token?.name ?? "",
        [`${key}.description`]: token?.description ?? "",
        [`${key}.token`]: token?.token ?? "",
        [`${key}.created_at`]: token ? String(token.created_at) : "",
        [`${key}.last_used`]: token ? String(token.last_used ?? 0) : "",
        [`${key}.in_sync`]: token ? "true" : "false",
        [`${key}.reason`]: token ? "in sync" : `no API token is named "${name}"`,
      });
    }
  } else if (command === "flavors") {
    const region = query.region_id ? `?region_id=${encodeURIComponent(query.region_id)}` : "";
    const groups = await call("GET", `${base}/flavors${region}`, auth);
    const matches = groups.data
      .flatMap((g) => g.products)
      .filter((f) => (!query.gpu || f.gpu === query.gpu) && (!query.gpu_count || f.gpu_count === Number(query.gpu_count)))
      .sort((a, b) => a.price - b.price);
    result = { ids: JSON.stringify(matches.map((f) => f.id)), count: String(matches.length), cheapest_id: matches[0]?.id ?? "" };
  } else {
    throw new Error(`unknown command ${command}`);
  }
  process.stdout.write(JSON.stringify(result) + "\n");
  agent.destroy();
}

main().catch((err) => {
  process.stderr.write(`minimal: ${err.message}\n`);
  process.exitCode = 1;
});
