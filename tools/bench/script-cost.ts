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
 *   node build/tools/script-cost.js [--runs N] [--command stack-read|flavors] [--also OTHER-BUILD.js ...] [--node PATH]
 *
 * `--node` runs both programs with another node binary (say, Node 24 from
 * `npm install --prefix /tmp/node24 node@24`: /tmp/node24/node_modules/node/bin/node).
 *
 * `--also` adds another build of the script (say, the bundle of an older commit) to the same
 * alternating session, so a before/after comparison sees the same machine.
 *
 * The commands are the two that a steady `terraform plan` runs: `stack-read` (one per stack)
 * and `flavors` (one per lookup). The script runs twice over: "script" in a folder where Node's
 * compile cache is already (every run in a stack folder after the first), "script, first run" in
 * one it is removed from before each run (the first run after a synth into a fresh folder, which
 * also writes the cache). On a Node without module.enableCompileCache both rows are alike.
 *
 * Targets (issue 15): median wall time <= 1.6x the baseline's, peak RSS <= 60 MiB, on Node 22, 24
 * and 26; both rows are printed, the target is judged on the first.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { defaultFlavors, type RunningEmulator, startEmulator } from "cdktf-gpucloud/emulator";

const ROOT = path.resolve(__dirname, "..", "..");
const BUNDLE = path.join(ROOT, "lib", "assets", "gpucloud-tf.js");
const BUNDLE_MAIN = path.join(ROOT, "lib", "assets", "gpucloud-tf-main.js");
/** Where the launcher keeps Node's compile cache, in the folder it runs in (src/runtime/launcher.ts). */
const CODE_CACHE_DIR = ".gpucloud-cache";
const METAFILE = path.join(ROOT, "build", "gpucloud-tf.meta.json");
const BASELINE = path.join(ROOT, "tools", "bench", "minimal-http-script.cjs");
const GNU_TIME = "/usr/bin/time";
const USERNAME = "bench";
const PASSWORD = "bench-password-5c1e";
const TOKEN_NAME = "bench-token";
/** A construct address as the ApiToken construct makes them (hex). */
const STACK_READ_KEY = "c8a1b2c3d4e5f60718293a4b5c6d7e8f90";
const WARMUP_RUNS = 2;
const TARGET_RATIO = 1.6;
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

const USAGE = "usage: script-cost [--runs N] [--command stack-read|flavors] [--also OTHER-BUILD.js ...] [--node PATH]";

function parseArgs(argv: readonly string[]): { runs: number; commands: string[]; others: string[]; node: string } {
  let runs = 21;
  let node = process.execPath;
  let commands = ["stack-read", "flavors"];
  const others: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--runs") runs = Number(argv[++i]);
    else if (arg === "--command") commands = [String(argv[++i])];
    else if (arg === "--also") others.push(path.resolve(String(argv[++i])));
    else if (arg === "--node") node = path.resolve(String(argv[++i]));
    else throw new Error(`unknown argument ${arg}; ${USAGE}`);
  }
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");
  for (const other of others) if (!existsSync(other)) throw new Error(`--also ${other}: no such file`);
  if (!existsSync(node)) throw new Error(`--node ${node}: no such file`);
  return { runs, commands, others, node };
}

function cases(emulator: RunningEmulator): Case[] {
  const tokenId = emulator.tokens().find((t) => t.name === TOKEN_NAME)!.id;
  const region = defaultFlavors()[0]!.products[0]!.region_id;
  return [
    {
      // One managed token, as the read of a stack with one ApiToken asks (src/constructs/stack-read.ts).
      command: "stack-read",
      query: { [`${STACK_READ_KEY}.name`]: TOKEN_NAME },
      check: (stdout) => {
        const result = JSON.parse(stdout);
        if (result[`${STACK_READ_KEY}.id`] !== tokenId || result[`${STACK_READ_KEY}.in_sync`] !== "true") {
          throw new Error(`stack-read did not find the token: ${stdout.slice(0, 200)}`);
        }
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
function runOnce(node: string, script: string, c: Case, env: NodeJS.ProcessEnv, cwd: string, rssFile: string | undefined): Promise<Sample> {
  const nodeArgs = [script, c.command];
  const [file, args] = rssFile ? [GNU_TIME, ["-f", "%M %U %S", "-o", rssFile, node, ...nodeArgs]] : [node, nodeArgs];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
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
    const key = match ? match[1]! : input.startsWith("src/") ? "src (this library)" : input;
    byPackage.set(key, (byPackage.get(key) ?? 0) + info.bytesInOutput);
  }
  return [...byPackage.entries()].sort((a, b) => b[1] - a[1]);
}

async function main(): Promise<void> {
  const { runs, commands, others, node } = parseArgs(process.argv.slice(2));
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run npm run build`);
  const hasTime = existsSync(GNU_TIME);

  console.log(
    `bundle: ${path.relative(ROOT, BUNDLE_MAIN)} ${fmtKb(statSync(BUNDLE_MAIN).size)}, launcher ${path.relative(ROOT, BUNDLE)} ${fmtKb(statSync(BUNDLE).size)}`,
  );
  const composition = bundleComposition();
  if (composition) {
    for (const [name, bytes] of composition) console.log(`  ${name.padEnd(24)} ${fmtKb(bytes).padStart(11)}`);
  }
  const nodeVersion = node === process.execPath ? process.version : execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  console.log(`node ${nodeVersion}; ${runs} runs each (+${WARMUP_RUNS} warm-up), alternating order; emulator on loopback`);
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
    // Each program runs in a folder of its own, as the script runs in a stack folder: "script"
    // finds the code cache that an earlier run of it left there (every run after the first one
    // in a stack folder), "script, first run" never does (each run starts without it and writes
    // it: the first run after a synth into a fresh folder). Then any --also builds (say, an
    // older bundle), then the baseline.
    const folder = (name: string) => {
      const dir = path.join(work, name);
      mkdirSync(dir);
      return dir;
    };
    const noop = () => undefined;
    const coldDir = folder("cold");
    const programs: Array<{ label: string; file: string; cwd: string; before: () => void }> = [
      { label: "script", file: BUNDLE, cwd: folder("warm"), before: noop },
      {
        label: "script, first run",
        file: BUNDLE,
        cwd: coldDir,
        before: () => rmSync(path.join(coldDir, CODE_CACHE_DIR), { recursive: true, force: true }),
      },
      ...others.map((file, i) => ({
        label: path.relative(ROOT, file).startsWith("..") ? file : path.relative(ROOT, file),
        file,
        cwd: folder(`also-${i}`),
        before: noop,
      })),
      { label: "baseline", file: BASELINE, cwd: folder("baseline"), before: noop },
    ];
    for (const c of cases(emulator).filter((x) => commands.includes(x.command))) {
      const samples: Sample[][] = programs.map(() => []);
      for (let i = 0; i < WARMUP_RUNS + runs; i++) {
        // Rotate who goes first, so that each program meets the same mix of machine states.
        for (let k = 0; k < programs.length; k++) {
          const p = (i + k) % programs.length;
          programs[p]!.before();
          const sample = await runOnce(node, programs[p]!.file, c, env, programs[p]!.cwd, rssFile);
          if (i >= WARMUP_RUNS) samples[p]!.push(sample);
        }
      }
      const warmCache = path.join(programs[0]!.cwd, CODE_CACHE_DIR);
      const cached = existsSync(warmCache)
        ? readdirSync(warmCache, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
        : [];
      const cachedBytes = cached.reduce((sum, e) => sum + statSync(path.join(e.parentPath, e.name)).size, 0);
      console.log(
        `${c.command}: compile cache ${cached.length === 0 ? "none (this node has no module.enableCompileCache)" : `${cached.length} file(s), ${fmtKb(cachedBytes)}`}`,
      );
      const stat = (s: Sample[]) => ({
        median: quantile(
          s.map((x) => x.wallMs),
          0.5,
        ),
        p90: quantile(
          s.map((x) => x.wallMs),
          0.9,
        ),
        rss: hasTime ? Math.max(...s.map((x) => x.maxRssKiB!)) : undefined,
        // A mean, not a median: single readings are in steps of 10 ms.
        cpu: hasTime ? s.reduce((sum, x) => sum + x.cpuMs!, 0) / s.length : undefined,
      });
      const stats = samples.map(stat);
      const baseline = stats[stats.length - 1]!;
      const rss = (kib?: number) => (kib === undefined ? "n/a" : `${mib(kib).toFixed(1)} MiB`);
      const cpu = (ms?: number) => (ms === undefined ? "n/a" : fmtMs(ms));
      programs.forEach((program, p) => {
        const s = stats[p]!;
        const ratio = s.median / baseline.median;
        const cpuRatio = s.cpu !== undefined && baseline.cpu ? `${(s.cpu / baseline.cpu).toFixed(2)}x` : "n/a";
        let target = "";
        if (p === 0) {
          const met = ratio <= TARGET_RATIO && (s.rss === undefined || mib(s.rss) <= TARGET_RSS_MIB);
          allMet &&= met;
          target = met ? "ok" : "MISSED";
        }
        rows.push([
          c.command,
          program.label,
          fmtMs(s.median),
          fmtMs(s.p90),
          `${ratio.toFixed(2)}x`,
          cpu(s.cpu),
          cpuRatio,
          rss(s.rss),
          target,
        ]);
      });
    }
    const header = ["command", "program", "median wall", "p90 wall", "ratio", "mean CPU", "CPU ratio", "peak RSS (max)", "target"];
    const widths = header.map((h, col) => Math.max(h.length, ...rows.map((r) => r[col]!.length)));
    const line = (cells: string[]) =>
      cells
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join("  ")
        .trimEnd();
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
