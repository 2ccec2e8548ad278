/**
 * Client-level convergence under the emulator's faults (issue 7): each "run" is a fresh client
 * (as a script process would be) doing what token-apply does: walk the list, create when the
 * name is free. Prints, per scenario, runs that succeeded, duplicates and wall time per round.
 * Real Terraform is not involved (see test/terraform/client-faults.test.ts for that).
 *
 *   npx esbuild tools/bench/client-faults.ts --bundle --platform=node --outfile=build/bench/client-faults.js \
 *     && node build/bench/client-faults.js
 */
import { GpuCloudClient, listAllTokens } from "../../src/client";
import { type EmulatorFaults, startEmulator } from "../../src/emulator";

interface Figures {
  ok: number;
  failed: number;
  duplicates: number;
  times: number[];
}

async function round(existing: number, faults: EmulatorFaults, phase: number, parallel: number, figures: Figures): Promise<void> {
  const emu = await startEmulator({ maxPageSize: 50 });
  for (let i = 0; i < existing; i++) emu.addToken({ name: `old-${i}`, createdAt: 1_700_000_000 + i });
  emu.setFaults(faults);
  // shift the phase of deterministic faults from round to round
  for (let i = 0; i < phase % 3; i++) await fetch(`${emu.url}/flavors`);
  const started = Date.now();
  const names = Array.from({ length: parallel }, (_, i) => `t${i}`);
  const results = await Promise.allSettled(
    names.map(async (name) => {
      const client = new GpuCloudClient({
        baseUrl: emu.url,
        credentials: { username: "demo", password: "demo-password" },
        deadline: Date.now() + 120_000,
        totalTimeoutMs: 120_000,
      });
      try {
        const all = await listAllTokens(client);
        if (!all.some((t) => t.name === name)) await client.createToken({ name });
      } finally {
        await client.close();
      }
    }),
  );
  figures.times.push(Date.now() - started);
  for (const result of results) {
    if (result.status === "fulfilled") figures.ok++;
    else {
      figures.failed++;
      console.log(`  failure: ${(result.reason as Error).message.slice(0, 200)}`);
    }
  }
  for (const name of names) figures.duplicates += Math.max(0, emu.tokens().filter((t) => t.name === name).length - 1);
  await emu.close();
}

async function scenario(label: string, existing: number, faults: EmulatorFaults, rounds: number, parallel: number): Promise<void> {
  const figures: Figures = { ok: 0, failed: 0, duplicates: 0, times: [] };
  for (let r = 0; r < rounds; r++) await round(existing, faults, r, parallel, figures);
  const times = [...figures.times].sort((a, b) => a - b);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    `${label}: runs ok ${figures.ok}/${figures.ok + figures.failed}, duplicates ${figures.duplicates}, ` +
      `wall per round median ${s(times[Math.floor(times.length / 2)]!)}, max ${s(times[times.length - 1]!)}`,
  );
}

async function main(): Promise<void> {
  await scenario("502 every 3rd, 60 tokens, 1 run x 9 rounds", 60, { serverErrorEvery: 3 }, 9, 1);
  await scenario("502 every 3rd, 300 tokens, 1 run x 3 rounds", 300, { serverErrorEvery: 3 }, 3, 1);
  await scenario("502 every 3rd, 60 tokens, 3 parallel runs x 6 rounds", 60, { serverErrorEvery: 3 }, 6, 3);
  await scenario(
    "504 then commit after 3 s, 60 tokens, 1 run x 2 rounds",
    60,
    { gatewayTimeoutCreates: 1, createCommitDelayMs: 3000 },
    2,
    1,
  );
  await scenario(
    "errors as HTTP 200 + 502 every 3rd + sort refused, 60 tokens x 3",
    60,
    { serverErrorEvery: 3, errorsAsHttp200: true, rejectSortParams: true },
    3,
    1,
  );
  await scenario("oldest token deleted on the 2nd list request, 250 tokens x 3", 250, { deleteOnListRequest: 2 }, 3, 1);
}

void main();
