/**
 * `npm run bench:script`: what one run of the bundled script costs next to the floor of the
 * one-process-per-read model, a minimal node:http script doing the same requests
 * (./minimal-http-script.cjs).
 *
 * Both run side by side in one session against the emulator on loopback, alternating which goes
 * first, so that drift of a shared machine hits both alike. Prints the bundle size (and what it
 * is made of, from the esbuild metafile when the build left one), median and p90 wall time,
 * their ratio, mean CPU time and peak RSS (both from GNU time; "n/a" without /usr/bin/time).
 *
 *   node build/tools/script-cost.js [--runs N] [--command token-read|flavors]
 *
 * Targets (issue 7): median wall time <= 1.3x the baseline's, peak RSS <= 60 MiB.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { defaultFlavors, startEmulator, type RunningEmulator } from "cdktf-gpucloud/emulator";

const ROOT = path.resolve(__dirname, "..", "..");
const BUNDLE = path.join(ROOT, "lib", "assets", "gpucloud-tf.js");
const METAFILE = path.join(ROOT, "build", "gpucloud-tf.meta.json");
const BASELINE = path.join(ROOT, "tools", "bench", "minimal-http-script.cjs");
const GNU_TIME = "/usr/bin/time";
const USERNAME = "bench";
const PASSWORD = "bench-password-5c1e";
const TOKEN_NAME = "bench-token";
const WARMUP_RUNS = 2;
const TARGET_RATIO = 1.3;
const TARGET_RSS_MIB = 60;

interface Sample {
  readonly wallMs: number;
  /** Peak resident set size in KiB, when GNU time is available. */
  readonly maxRssKiB?: number;
  /** User + system CPU time in ms (GNU time, 10 ms resolution), when available. */
  readonly cpuMs?: number;
}

interface Case {
  readonly command: string;
  readonly query: Record<string, string>;
  /** Throws when a run's output is not the expected result, so failures are never timed. */
  check(stdout: string): void;
}

function parseArgs(argv: readonly string[]): { runs: number; commands: string[] } {
  let runs = 21;
  let commands = ["token-read", "flavors"];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--runs") runs = Number(argv[++i]);
    else if (arg === "--command") commands = [String(argv[++i])];
    else throw new Error(`unknown argument ${arg}; usage: script-cost [--runs N] [--command token-read|flavors]`);
  }
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");
  return { runs, commands };
}

function cases(emulator: RunningEmulator): Case[] {
  const tokenId = emulator.tokens().find((t) => t.name === TOKEN_NAME)!.id;
  const region = defaultFlavors()[0]!.products[0]!.region_id;
  return [
    {
      command: "token-read",
      query: { name: TOKEN_NAME },
      check: (stdout) => {
        if (JSON.parse(stdout).id !== tokenId) throw new Error(`token-read printed another token: ${stdout.slice(0, 200)}`);
      },
    },
    {
      command: "flavors",
      query: { region_id: region, gpu: "H100", allow_empty: "true" },
      check: (stdout) => {
        if (typeof JSON.parse(stdout).count !== "string") throw new Error(`flavors printed no count: ${stdout.slice(0, 200)}`);
      },
    },
  ];
}

/** One process, wall time from spawn to exit as its parent sees it (what Terraform waits for). */
function runOnce(script: string, c: Case, env: NodeJS.ProcessEnv, rssFile: string | undefined): Promise<Sample> {
  const nodeArgs = [script, c.command];
  const [file, args] = rssFile ? [GNU_TIME, ["-f", "%M %U %S", "-o", rssFile, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) return reject(new Error(`${path.basename(script)} ${c.command} exited ${code}: ${stderr.trim()}`));
      try {
        c.check(stdout);
      } catch (err) {
        return reject(err);
      }
      if (!rssFile) return resolve({ wallMs });
      const [rss, user, sys] = readFileSync(rssFile, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
      resolve({ wallMs, maxRssKiB: rss, cpuMs: (user! + sys!) * 1000 });
    });
    child.stdin.end(JSON.stringify(c.query));
  });
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

const mib = (kib: number) => kib / 1024;
const fmtMs = (ms: number) => `${ms.toFixed(1)} ms`;
const fmtKb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Bytes of the bundle's output per source package, from the esbuild metafile. */
function bundleComposition(): Array<[string, number]> | undefined {
  if (!existsSync(METAFILE)) return undefined;
  const meta = JSON.parse(readFileSync(METAFILE, "utf8"));
  const output = Object.values<any>(meta.outputs)[0];
  const byPackage = new Map<string, number>();
  for (const [input, info] of Object.entries<any>(output.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
    const key = match ? match[1]! : input.startsWith("src/") ? "src (this library)" : input.startsWith("scripts/") ? "scripts/bundle (shims)" : input;
    byPackage.set(key, (byPackage.get(key) ?? 0) + info.bytesInOutput);
  }
  return [...byPackage.entries()].sort((a, b) => b[1] - a[1]);
}

async function main(): Promise<void> {
  const { runs, commands } = parseArgs(process.argv.slice(2));
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run npm run build`);
  const hasTime = existsSync(GNU_TIME);

  console.log(`bundle: ${path.relative(ROOT, BUNDLE)} ${fmtKb(statSync(BUNDLE).size)}`);
  const composition = bundleComposition();
  if (composition) {
    for (const [name, bytes] of composition) console.log(`  ${name.padEnd(24)} ${fmtKb(bytes).padStart(11)}`);
  }
  console.log(`node ${process.version}; ${runs} runs each (+${WARMUP_RUNS} warm-up), alternating order; emulator on loopback`);
  if (!hasTime) console.log(`peak RSS: n/a (${GNU_TIME} not found; apt-get install time)`);

  const emulator = await startEmulator({ users: [{ username: USERNAME, password: PASSWORD }] });
  const work = mkdtempSync(path.join(tmpdir(), "gpucloud-bench-"));
  try {
    for (const name of ["ci-a", TOKEN_NAME, "ci-b"]) emulator.addToken({ name, description: "bench" });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GPUCLOUD_BASE_URL: emulator.url,
      GPUCLOUD_USERNAME: USERNAME,
      GPUCLOUD_PASSWORD: PASSWORD,
    };
    const rssFile = hasTime ? path.join(work, "rss") : undefined;
    const rows: string[][] = [];
    let allMet = true;
    for (const c of cases(emulator).filter((x) => commands.includes(x.command))) {
      const samples: Record<"script" | "baseline", Sample[]> = { script: [], baseline: [] };
      for (let i = 0; i < WARMUP_RUNS + runs; i++) {
        const order: Array<"script" | "baseline"> = i % 2 === 0 ? ["script", "baseline"] : ["baseline", "script"];
        for (const who of order) {
          const sample = await runOnce(who === "script" ? BUNDLE : BASELINE, c, env, rssFile);
          if (i >= WARMUP_RUNS) samples[who].push(sample);
        }
      }
      const stat = (s: Sample[]) => ({
        median: quantile(s.map((x) => x.wallMs), 0.5),
        p90: quantile(s.map((x) => x.wallMs), 0.9),
        rss: hasTime ? Math.max(...s.map((x) => x.maxRssKiB!)) : undefined,
        // A mean, not a median: single readings are in steps of 10 ms.
        cpu: hasTime ? s.reduce((sum, x) => sum + x.cpuMs!, 0) / s.length : undefined,
      });
      const script = stat(samples.script);
      const baseline = stat(samples.baseline);
      const ratio = script.median / baseline.median;
      const met = ratio <= TARGET_RATIO && (script.rss === undefined || mib(script.rss) <= TARGET_RSS_MIB);
      allMet &&= met;
      const rss = (kib?: number) => (kib === undefined ? "n/a" : `${mib(kib).toFixed(1)} MiB`);
      const cpu = (ms?: number) => (ms === undefined ? "n/a" : fmtMs(ms));
      const cpuRatio = script.cpu !== undefined && baseline.cpu ? `${(script.cpu / baseline.cpu).toFixed(2)}x` : "n/a";
      rows.push(
        [c.command, "script", fmtMs(script.median), fmtMs(script.p90), `${ratio.toFixed(2)}x`, cpu(script.cpu), cpuRatio, rss(script.rss), met ? "ok" : "MISSED"],
        [c.command, "baseline", fmtMs(baseline.median), fmtMs(baseline.p90), "1.00x", cpu(baseline.cpu), "1.00x", rss(baseline.rss), ""],
      );
    }
    const header = ["command", "program", "median wall", "p90 wall", "ratio", "mean CPU", "CPU ratio", "peak RSS (max)", "target"];
    const widths = header.map((h, col) => Math.max(h.length, ...rows.map((r) => r[col]!.length)));
    const line = (cells: string[]) => cells.map((cell, col) => cell.padEnd(widths[col]!)).join("  ").trimEnd();
    console.log("");
    console.log(line(header));
    for (const row of rows) console.log(line(row));
    console.log(`\nwall time is what Terraform waits for; CPU time (user + system) is steadier on a busy machine.`);
    console.log(`targets: median wall <= ${TARGET_RATIO}x baseline, peak RSS <= ${TARGET_RSS_MIB} MiB: ${allMet ? "met" : "NOT met"}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    await emulator.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:script: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
