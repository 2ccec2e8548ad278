/**
 * A large account, an API some distance away: what a steady plan, a first apply and an update
 * of every token cost in API calls and in wall time, against Terraform's floor. Prints figures,
 * asserts nothing.
 *
 *   npm run bench:apply                                   # latency 0 and 50 ms, 1,000 other tokens
 *   npm run bench:apply -- --latency=50 --runs=3 --node=<node 22+ binary>
 *   npm run bench:apply -- --rate-limited                 # also: a first apply against 20 requests/s, 10 logins/min
 *   npm run bench:apply -- --plans-only --runs=7          # the steady plan only
 *   npm run bench:apply -- --large-tokens=0               # without the first apply of 200 tokens
 *   npm run bench:apply -- --big=1000:10000 --latency=0   # also: 1,000 new tokens on 10,000 others (issue 41)
 *
 * Scenarios, each at every `--latency` (the emulator waits that long before handling each request):
 *
 * - steady plan: `--plan-tokens` ApiTokens (default 20) and one Flavors, each with an output,
 *   applied twice, then planned alternately with its floor (that many null_resources, one
 *   data "external" running `node -e`, as many outputs). With a latency, the time above the
 *   floor divided by it is the number of round trips the plan waited for one after another.
 * - first apply: `--tokens` ApiTokens (default 40), none of which exists yet, on an account with
 *   `--others` other tokens (default 1,000).
 * - update: the same tokens, every description changed.
 * - a larger first apply: `--large-tokens` ApiTokens (default 200; 0 leaves it out), one run, so
 *   that the list calls of a first apply can be read at two sizes: they grow with the tokens
 *   created, and should grow in proportion. Once with ids only, once with every value in a
 *   sensitive output (the reads after the writes then list back to the oldest token they need).
 *
 * - `--big=K:M`: a first apply of K ApiTokens on an account of M others, once without a rate limit and
 *   once at 20 requests/s and 10 logins/min on a server that sorts, against two floors: the API's
 *   (1 login + ceil((M+K)/50) list pages + K creates, and its time at 20 requests/s) and Terraform's
 *   (K provisioner-less null_resources and one whose create-time provisioner runs `node -e 0`).
 *
 * - `--request-log=FILE`: appends every request the emulators answer to FILE (time in ms, method, path
 *   with its paging query, status), to tell which part of a run made which list call.
 *
 * - `--cpu=K1,K2:M1,M2`: the CPU time (user + system, measured by GNU time around each `node` Terraform
 *   starts) of the plan-time read, the writer and the read after the writes, in a first apply of K1 and
 *   K2 tokens on accounts of M1 and M2 others, no rate limit; and per account, the writer's and the
 *   read after the writes' CPU per token ((CPU at K2 - CPU at K1) / (K2 - K1)), which should not grow
 *   with the account (the walk's own cost does, and cancels out).
 *
 * The floor of an apply is as many null_resources whose create-time and destroy-time
 * provisioners run `node -e 0`, and one trivial data "external"; its update changes every
 * resource's triggers (a replacement: both provisioners run, as for the library's update).
 * Each run starts from a fresh emulator and fresh state; library and floor alternate.
 *
 * Printed per scenario: requests, logins and token-list calls the library made (from the
 * emulator's counters), wall time of both (medians over `--runs`) and their ratio; for the steady
 * plan also the round trips waited for in sequence, against the floor and against the same plan
 * at 0 ms (which leaves out the CPU time a loaded machine inflates).
 *
 * The library is reached through its package name (the built lib/ of the checkout this runs in);
 * the emulator is bundled into this file, so one build of the bench measures any version of the
 * library against the same API (copy build/tools/bench/apply-scale.js into the other checkout's
 * build/tools/bench/).
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken, Flavors } from "cdktf-gpucloud";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { EmulatorRateLimit } from "../../src/emulator/types";
import {
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  terraformAvailable,
  TerraformRunner,
  writeTerraformJson,
} from "../../test/support/terraform";
import { arg, flag, median, numbers } from "./args";
import { cpuShimUnavailable, installCpuShim, type ScriptCpu, scriptCpuTimes } from "./cpu-shim";

const USER = { username: "scale-bot", password: "scale-password-72c0" };
const STACK = "scale";

interface Cost {
  readonly requests: number;
  readonly logins: number;
  readonly lists: number;
  readonly throttled: number;
}

function costOf(emulator: RunningEmulator): Cost {
  const s = emulator.stats();
  return { requests: s.requests, logins: s.logins, lists: s.byRoute["GET /api-tokens"] ?? 0, throttled: s.throttled };
}

/**
 * The library's stack: `n` tokens (descriptions `variant`) and optionally one lookup, each with an
 * output; with `values`, each token's value in a sensitive output too (a stack handing them on).
 */
function libraryStack(outdir: string, n: number, variant: string, lookup: boolean, values = false): string {
  const app = new App({ outdir });
  const stack = new TerraformStack(app, STACK);
  new LocalBackend(stack, { path: "terraform.tfstate" });
  if (lookup) {
    const gpu = new Flavors(stack, "gpu", { regionId: "norway-east-1", gpu: "H100", gpuCount: 1 });
    new TerraformOutput(stack, "gpu_id", { value: gpu.cheapestId });
  }
  for (let i = 0; i < n; i++) {
    const token = new ApiToken(stack, `t${i}`, { name: `scale-${i}`, description: `token ${i}, ${variant}` });
    new TerraformOutput(stack, `t${i}_id`, { value: token.tokenId });
    if (values) new TerraformOutput(stack, `t${i}_value`, { value: token.token, sensitive: true });
  }
  app.synth();
  return path.join(outdir, "stacks", STACK);
}

/** The floor: `n` null_resources (with provisioners running `node -e 0` when `provisioners`), one data "external". */
function floorStack(dir: string, n: number, variant: string, provisioners: boolean): string {
  mkdirSync(dir, { recursive: true });
  const nodeZero = { "local-exec": { command: "node -e 0" } };
  const resources: Record<string, unknown> = {};
  const outputs: Record<string, unknown> = { gpu_id: { value: '${data.external.read.result["id"]}' } };
  for (let i = 0; i < n; i++) {
    resources[`t${i}`] = {
      triggers: { name: `floor-${i}`, description: `token ${i}, ${variant}` },
      ...(provisioners ? { provisioner: [nodeZero, { "local-exec": { command: "node -e 0", when: "destroy" } }] } : {}),
    };
    outputs[`t${i}_id`] = { value: `\${null_resource.t${i}.id}` };
  }
  return floorConfig(dir, resources, outputs);
}

/** A floor's configuration: its null_resources and outputs, one trivial data "external", a local backend. */
function floorConfig(dir: string, resources: Record<string, unknown>, outputs: Record<string, unknown>): string {
  return writeTerraformJson(dir, {
    terraform: {
      required_providers: { null: { source: "hashicorp/null" }, external: { source: "hashicorp/external" } },
      backend: { local: { path: "terraform.tfstate" } },
    },
    data: { external: { read: { program: ["node", "-e", 'process.stdout.write(JSON.stringify({ id: "x" }))'], query: { name: "read" } } } },
    resource: { null_resource: resources },
    output: outputs,
  });
}

/** Terraform's floor of the writer's shape: `n` provisioner-less null_resources and one provisioned, one data "external". */
function leanFloorStack(dir: string, n: number): string {
  mkdirSync(dir, { recursive: true });
  const resources: Record<string, unknown> = { writer: { provisioner: [{ "local-exec": { command: "node -e 0" } }] } };
  const outputs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    resources[`t${i}`] = { triggers: { name: `floor-${i}` } };
    outputs[`t${i}_id`] = { value: `\${null_resource.t${i}.id}` };
  }
  return floorConfig(dir, resources, outputs);
}

interface Setting {
  readonly latencyMs: number;
  readonly others: number;
  readonly maxPageSize: number;
  readonly rateLimit?: EmulatorRateLimit;
}

/** `--request-log=FILE`: every request the emulators answer, one line each with its time in ms. */
const requestLog = arg("request-log");

/** A line in the request log, with its time. */
function logLine(line: string): void {
  if (requestLog !== undefined) appendFileSync(requestLog, `${Date.now()} ${line}\n`);
}

/** A line of the bench's own in the request log, to place the requests in the run. */
const mark = (what: string): void => logLine(`bench ${what}`);

async function emulatorFor(setting: Setting): Promise<RunningEmulator> {
  const emulator = await startEmulator({
    users: [USER],
    maxPageSize: setting.maxPageSize,
    latencyMs: setting.latencyMs,
    rateLimit: setting.rateLimit,
    log: requestLog === undefined ? undefined : logLine,
  });
  const past = Math.floor(Date.now() / 1000) - 86_400;
  for (let i = 0; i < setting.others; i++) emulator.addToken({ name: `other-${i}`, createdAt: past + i });
  return emulator;
}

/**
 * Removes what an apply left in a stack folder, so that the next apply is a first one (the records
 * folder too: versions before issue 41 kept one, and this bench measures them side by side).
 */
function freshState(dir: string): void {
  for (const name of ["terraform.tfstate", "terraform.tfstate.backup", ".gpucloud-handoff"])
    rmSync(path.join(dir, name), { recursive: true, force: true });
}

const seconds = (ms: number): string => (ms / 1000).toFixed(2);

interface Row {
  readonly what: string;
  readonly cost: Cost;
  readonly library: number[];
  readonly floor: number[];
  readonly latencyMs: number;
  readonly note?: string;
}

function printRow(row: Row): void {
  const lib = median(row.library);
  const floor = median(row.floor);
  const inSequence = row.latencyMs > 0 ? ((lib - floor) / row.latencyMs).toFixed(1) : "—";
  console.log(
    `| ${row.what} | ${row.latencyMs} ms | ${row.cost.requests}${row.cost.throttled ? ` (${row.cost.throttled} answered 429)` : ""} | ${row.cost.logins} | ` +
      `${row.cost.lists} | ${seconds(lib)} s | ${seconds(floor)} s | **${(lib / floor).toFixed(2)}x** | ${inSequence} |${row.note ? ` ${row.note}` : ""}`,
  );
}

async function main(): Promise<void> {
  const tf = terraformAvailable();
  if (!tf.ok) throw new Error(`terraform is needed: ${tf.reason}`);
  ensureProviderDoublesBuilt();
  const latencies = numbers("latency", [0, 50]);
  const runs = Number(arg("runs") ?? 1);
  const others = Number(arg("others") ?? 1000);
  const n = Number(arg("tokens") ?? 40);
  const large = Number(arg("large-tokens") ?? 200);
  const planTokens = Number(arg("plan-tokens") ?? 20);
  const maxPageSize = Number(arg("max-page") ?? 50);
  const nodeBin = arg("node");
  const baseEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...(nodeBin ? { PATH: `${path.dirname(path.resolve(nodeBin))}${path.delimiter}${process.env.PATH ?? ""}` } : {}),
    GPUCLOUD_USERNAME: USER.username,
    GPUCLOUD_PASSWORD: USER.password,
  };
  const nodeVersion = execFileSync("node", ["--version"], { env: baseEnv, encoding: "utf8" }).trim();
  console.log(
    `## A large account (terraform ${tf.version}, node ${nodeVersion}; emulator, ${others} other tokens, pages of ${maxPageSize}; ` +
      `${runs} run${runs === 1 ? "" : "s"} each, library and floor alternating)\n`,
  );
  console.log(
    "| scenario | latency | requests | logins | list calls | library (median) | floor (median) | ratio | round trips in sequence above the floor |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");

  const doubles: ProviderDoubles = await startProviderDoubles();
  const root = mkdtempSync(path.join(tmpdir(), "gpucloud-scale-"));
  try {
    // Synthesized once; the stack folders are reused run after run, the state removed between.
    const planLib = libraryStack(path.join(root, "plan-lib"), planTokens, "first", true);
    const applyLib = libraryStack(path.join(root, "apply-lib"), n, "first", false);
    const updateLib = libraryStack(path.join(root, "update-lib"), n, "second", false);
    const planFloor = floorStack(path.join(root, "plan-floor"), planTokens, "first", false);
    const applyFloor = floorStack(path.join(root, "apply-floor"), n, "first", true);
    const updateFloor = floorStack(path.join(root, "update-floor"), n, "second", true);
    const largeLib = large > 0 ? libraryStack(path.join(root, "large-lib"), large, "first", false) : undefined;
    const largeValues = large > 0 ? libraryStack(path.join(root, "large-values"), large, "first", false, true) : undefined;
    const largeFloor = large > 0 ? floorStack(path.join(root, "large-floor"), large, "first", true) : undefined;
    // Each variant's configuration, kept outside the folders Terraform reads (the scripts' asset
    // is the same file in both: the update's configuration refers to the apply folder's copy).
    const configs = {
      libFirst: path.join(root, "lib-first.json"),
      libSecond: path.join(updateLib, "cdk.tf.json"),
      floorFirst: path.join(root, "floor-first.json"),
      floorSecond: path.join(updateFloor, "main.tf.json"),
    };
    copyFileSync(path.join(applyLib, "cdk.tf.json"), configs.libFirst);
    copyFileSync(path.join(applyFloor, "main.tf.json"), configs.floorFirst);
    // The writer's inputs are an asset named by its content: the update's sits beside the first apply's.
    cpSync(path.join(updateLib, "assets"), path.join(applyLib, "assets"), { recursive: true });
    const runner = (dir: string, emulator: RunningEmulator) =>
      new TerraformRunner(dir, { doubles, env: { ...baseEnv, GPUCLOUD_BASE_URL: emulator.url }, timeoutMs: 900_000 });
    for (const dir of [planLib, applyLib, planFloor, applyFloor, largeLib, largeValues, largeFloor]) {
      if (dir !== undefined) await new TerraformRunner(dir, { doubles, env: baseEnv }).init({ check: true });
    }

    /** The steady plan's median wall time at each latency. */
    const steadyPlan = new Map<number, number>();
    for (const latencyMs of latencies) {
      const setting: Setting = { latencyMs, others, maxPageSize };

      // The steady plan.
      {
        const emulator = await emulatorFor(setting);
        try {
          freshState(planLib);
          freshState(planFloor);
          const lib = runner(planLib, emulator);
          const floor = runner(planFloor, emulator);
          for (const r of [lib, floor]) {
            await r.apply({ check: true });
            await r.apply({ check: true });
          }
          const libMs: number[] = [];
          const floorMs: number[] = [];
          let cost: Cost | undefined;
          for (let i = 0; i < Math.max(runs, 3); i++) {
            emulator.resetStats();
            const l = await lib.plan({ detailedExitCode: true, check: true });
            if (l.exitCode !== 0) throw new Error(`the library's steady plan is not empty:\n${l.stdout}`);
            cost ??= costOf(emulator);
            const f = await floor.plan({ detailedExitCode: true, check: true });
            libMs.push(l.durationMs);
            floorMs.push(f.durationMs);
          }
          printRow({ what: `steady plan, ${planTokens} tokens + 1 lookup`, latencyMs, cost: cost!, library: libMs, floor: floorMs });
          steadyPlan.set(latencyMs, median(libMs));
        } finally {
          await emulator.close();
        }
      }

      if (flag("plans-only")) continue;
      // The first apply and the update of every description, from fresh state each run.
      const first: { lib: number[]; floor: number[]; cost?: Cost } = { lib: [], floor: [] };
      const update: { lib: number[]; floor: number[]; cost?: Cost } = { lib: [], floor: [] };
      for (let r = 0; r < runs; r++) {
        const emulator = await emulatorFor(setting);
        try {
          freshState(applyLib);
          freshState(applyFloor);
          copyFileSync(configs.libFirst, path.join(applyLib, "cdk.tf.json"));
          copyFileSync(configs.floorFirst, path.join(applyFloor, "main.tf.json"));
          const lib = runner(applyLib, emulator);
          const floor = runner(applyFloor, emulator);
          emulator.resetStats();
          const a = await lib.apply({ check: true });
          first.cost ??= costOf(emulator);
          first.lib.push(a.durationMs);
          first.floor.push((await floor.apply({ check: true })).durationMs);

          // The update: the same folders, every description changed.
          copyFileSync(configs.libSecond, path.join(applyLib, "cdk.tf.json"));
          copyFileSync(configs.floorSecond, path.join(applyFloor, "main.tf.json"));
          emulator.resetStats();
          const u = await lib.apply({ check: true });
          update.cost ??= costOf(emulator);
          update.lib.push(u.durationMs);
          update.floor.push((await floor.apply({ check: true })).durationMs);
          const tokens = emulator.tokens().filter((t) => t.name.startsWith("scale-"));
          if (tokens.length !== n) throw new Error(`expected ${n} tokens after the applies, found ${tokens.length}`);
        } finally {
          await emulator.close();
        }
      }
      printRow({ what: `first apply, ${n} tokens`, latencyMs, cost: first.cost!, library: first.lib, floor: first.floor });
      printRow({ what: `every description of the ${n} changed`, latencyMs, cost: update.cost!, library: update.lib, floor: update.floor });

      // The larger first apply, ids only and with every value handed on: the reads after the
      // writes list back to the tokens whose values the stack refers to.
      for (const [lib, what] of [
        [largeLib, `first apply, ${large} tokens`],
        [largeValues, `first apply, ${large} tokens, every value in an output`],
      ] as const) {
        if (lib === undefined || largeFloor === undefined) continue;
        const emulator = await emulatorFor(setting);
        try {
          emulator.resetStats();
          const a = await runner(lib, emulator).apply({ check: true });
          const cost = costOf(emulator);
          const tokens = emulator.tokens().filter((t) => t.name.startsWith("scale-"));
          const floorMs = (await runner(largeFloor, emulator).apply({ check: true })).durationMs;
          printRow({
            what,
            latencyMs,
            cost,
            library: [a.durationMs],
            floor: [floorMs],
            note: `${new Set(tokens.map((t) => t.name)).size} of ${large} created, ${tokens.length - new Set(tokens.map((t) => t.name)).size} duplicates`,
          });
        } finally {
          freshState(lib);
          freshState(largeFloor);
          await emulator.close();
        }
      }
    }

    // The same plan at 0 ms and at a latency differ by the round trips it waits for one after
    // another; unlike the difference to the floor, this leaves out the library's own CPU time,
    // which a loaded machine inflates.
    const atZero = steadyPlan.get(0);
    for (const [latencyMs, ms] of steadyPlan) {
      if (latencyMs > 0 && atZero !== undefined) {
        console.log(
          `\nsteady plan: (library at ${latencyMs} ms - library at 0 ms) / ${latencyMs} ms = ${((ms - atZero) / latencyMs).toFixed(1)} round trips waited for in sequence`,
        );
      }
    }

    const big = arg("big");
    if (big !== undefined) {
      const [k, m] = big.split(":").map(Number);
      const bigLib = libraryStack(path.join(root, "big-lib"), k, "first", false);
      const bigFloor = leanFloorStack(path.join(root, "big-floor"), k);
      for (const dir of [bigLib, bigFloor]) await new TerraformRunner(dir, { doubles, env: baseEnv }).init({ check: true });
      const apiFloor = 1 + Math.ceil((m + k) / 50) + k;
      for (const rateLimit of [undefined, { requestsPerSecond: 20, loginsPerMinute: 10 }]) {
        const emulator = await emulatorFor({ latencyMs: 0, others: m, maxPageSize, rateLimit });
        try {
          freshState(bigLib);
          freshState(bigFloor);
          emulator.resetStats();
          mark(`terraform apply of ${k} tokens${rateLimit ? ", rate-limited" : ""}: start`);
          const a = await runner(bigLib, emulator).apply();
          mark(`terraform apply of ${k} tokens${rateLimit ? ", rate-limited" : ""}: end`);
          const cost = costOf(emulator);
          const tokens = emulator.tokens().filter((t) => t.name.startsWith("scale-"));
          const names = new Set(tokens.map((t) => t.name));
          const floorMs = (await runner(bigFloor, emulator).apply({ check: true })).durationMs;
          const limited = rateLimit ? ", 20 requests/s and 10 logins/min" : "";
          printRow({
            what: `first apply, ${k} tokens, ${m} others${limited}`,
            latencyMs: 0,
            cost,
            library: [a.durationMs],
            floor: [floorMs],
            note:
              `exit ${a.exitCode}; ${names.size} of ${k} created, ${tokens.length - names.size} duplicates; API floor ${apiFloor} requests ` +
              `(${(cost.requests / apiFloor).toFixed(2)}x)${rateLimit ? `, ${(apiFloor / 20).toFixed(0)} s at 20/s (${(a.durationMs / 1000 / (apiFloor / 20)).toFixed(2)}x)` : ""}; ` +
              `Terraform's floor: ${k} null_resources + 1 provisioned`,
          });
        } finally {
          await emulator.close();
        }
      }
    }

    const cpu = arg("cpu");
    if (cpu !== undefined) await cpuPerToken(cpu, { root, doubles, baseEnv, maxPageSize, runs });

    if (flag("rate-limited")) {
      // As in issue 24: 300 other tokens, 20 requests/s and 10 logins/min per user, no latency.
      const rateLimit = { requestsPerSecond: 20, loginsPerMinute: 10 };
      const emulator = await emulatorFor({ latencyMs: 0, others: 300, maxPageSize, rateLimit });
      try {
        freshState(applyLib);
        freshState(applyFloor);
        copyFileSync(configs.libFirst, path.join(applyLib, "cdk.tf.json"));
        copyFileSync(configs.floorFirst, path.join(applyFloor, "main.tf.json"));
        const lib = runner(applyLib, emulator);
        emulator.resetStats();
        const a = await lib.apply();
        const cost = costOf(emulator);
        const tokens = emulator.tokens().filter((t) => t.name.startsWith("scale-"));
        const names = new Set(tokens.map((t) => t.name));
        const floorMs = (await runner(applyFloor, emulator).apply({ check: true })).durationMs;
        printRow({
          what: `first apply, ${n} tokens, 300 others, 20 requests/s and 10 logins/min`,
          latencyMs: 0,
          cost,
          library: [a.durationMs],
          floor: [floorMs],
          note: `exit ${a.exitCode}; ${names.size} of ${n} created, ${tokens.length - names.size} duplicates`,
        });
      } finally {
        await emulator.close();
      }
    }
  } finally {
    await doubles.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * `--cpu=K1,K2:M1,M2`: the scripts' CPU time in first applies of K1 and K2 tokens on accounts of M1 and
 * M2 others (medians over `runs`), and per account the writer's and the read after the writes' CPU per token.
 */
async function cpuPerToken(
  spec: string,
  opts: { root: string; doubles: ProviderDoubles; baseEnv: NodeJS.ProcessEnv; maxPageSize: number; runs: number },
): Promise<void> {
  const unavailable = cpuShimUnavailable();
  if (unavailable !== undefined) {
    console.log(`\nscripts' CPU per token: skipped, ${unavailable}`);
    return;
  }
  const [ks, ms] = spec.split(":").map((list) => list.split(",").map(Number));
  const realNode = execFileSync("sh", ["-c", "command -v node"], { env: opts.baseEnv, encoding: "utf8" }).trim();
  const shimDir = mkdtempSync(path.join(opts.root, "cpu-shim-"));
  const stacks = new Map(ks.map((k) => [k, libraryStack(path.join(opts.root, `cpu-${k}`), k, "first", false)]));
  for (const dir of stacks.values()) await new TerraformRunner(dir, { doubles: opts.doubles, env: opts.baseEnv }).init({ check: true });
  /** Per script: its CPU ms in one apply (the plan-time read ends first, the read after the writes last). */
  const measure = async (k: number, m: number): Promise<{ read: number; writer: number; afterWrite: number }> => {
    const samples: { read: number; writer: number; afterWrite: number }[] = [];
    for (let r = 0; r < opts.runs; r++) {
      const emulator = await emulatorFor({ latencyMs: 0, others: m, maxPageSize: opts.maxPageSize });
      const log = path.join(shimDir, `cpu-${k}-${m}-${r}.log`);
      try {
        const dir = stacks.get(k)!;
        freshState(dir);
        const env = {
          ...opts.baseEnv,
          GPUCLOUD_BASE_URL: emulator.url,
          PATH: installCpuShim(shimDir, realNode, log, opts.baseEnv.PATH ?? ""),
        };
        await new TerraformRunner(dir, { doubles: opts.doubles, env, timeoutMs: 900_000 }).apply({ check: true });
      } finally {
        await emulator.close();
      }
      const reads = scriptCpuTimes(log).filter((t: ScriptCpu) => t.command === "stack-read");
      const writers = scriptCpuTimes(log).filter((t: ScriptCpu) => t.command === "token-writer");
      if (reads.length !== 2 || writers.length !== 1) throw new Error(`expected 2 reads and 1 writer in ${log}`);
      samples.push({ read: reads[0].cpuMs, writer: writers[0].cpuMs, afterWrite: reads[1].cpuMs });
    }
    return {
      read: median(samples.map((s) => s.read)),
      writer: median(samples.map((s) => s.writer)),
      afterWrite: median(samples.map((s) => s.afterWrite)),
    };
  };
  console.log("\n| other tokens | tokens created | plan-time read CPU | writer CPU | read after the writes CPU |\n|---|---|---|---|---|");
  const perToken: string[] = [];
  for (const m of ms) {
    const at = new Map<number, { read: number; writer: number; afterWrite: number }>();
    for (const k of ks) {
      const cpu = await measure(k, m);
      at.set(k, cpu);
      console.log(`| ${m} | ${k} | ${cpu.read} ms | ${cpu.writer} ms | ${cpu.afterWrite} ms |`);
    }
    const [lo, hi] = [at.get(ks[0])!, at.get(ks[ks.length - 1])!];
    const span = ks[ks.length - 1] - ks[0];
    perToken.push(
      `on ${m} others: writer ${((hi.writer - lo.writer) / span).toFixed(2)} ms per token, ` +
        `read after the writes ${((hi.afterWrite - lo.afterWrite) / span).toFixed(2)} ms per token`,
    );
  }
  console.log(`\nscripts' CPU per token created (between ${ks[0]} and ${ks[ks.length - 1]}): ${perToken.join("; ")}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
