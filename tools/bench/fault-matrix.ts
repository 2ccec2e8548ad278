/**
 * Fault matrix (`npm run bench:faults`): real Terraform, offline through the provider doubles,
 * applies a stack of three ApiTokens and one Flavors lookup against the emulator while it injects
 * one kind of fault, and prints per scenario how many applies it took to converge (a successful
 * apply followed by a plan with no changes), how many duplicate tokens the API ended with, and
 * the wall time. The faults stay on for every apply of a scenario, as a flaky API would.
 *
 * Target (issue 7): every scenario converges within 2 applies with 0 duplicates.
 *
 * It prints figures; it is not a test. Options: `--only NAME` (substring), `--max-applies N`,
 * `--verbose` (print Terraform's output of a failed apply).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken, Flavors } from "cdktf-gpucloud";
import { type EmulatorFaults, type RunningEmulator, startEmulator } from "cdktf-gpucloud/emulator";

import { ensureProviderDoublesBuilt, startProviderDoubles, terraformAvailable, TerraformRunner } from "../../test/support/terraform";

const USER = { username: "matrix", password: "matrix-password-31f7" };
const TOKEN_NAMES = ["matrix-ci", "matrix-batch", "matrix-notebooks"];

interface Scenario {
  readonly name: string;
  /** Faults active during every apply and plan. */
  readonly faults?: EmulatorFaults;
  /** Other tokens on the account before the first apply. */
  readonly otherTokens?: number;
  /** Called once the emulator runs, before the first apply (e.g. a timer that expires access tokens). */
  readonly during?: (api: RunningEmulator) => () => void;
}

const SCENARIOS: readonly Scenario[] = [
  { name: "no faults" },
  { name: "5xx on every 3rd request, 60 tokens", faults: { serverErrorEvery: 3 }, otherTokens: 60 },
  { name: "5xx on every 3rd request, 300 tokens", faults: { serverErrorEvery: 3 }, otherTokens: 300 },
  { name: "5xx on every 2nd request", faults: { serverErrorEvery: 2 } },
  { name: "429 on every 4th request, Retry-After 1 s", faults: { rateLimitEvery: 4, retryAfterSeconds: 1 } },
  { name: "dropped connections (20%)", faults: { dropConnectionRate: 0.2, seed: 7 } },
  { name: "lost create responses (2)", faults: { loseCreateResponses: 2 } },
  { name: "creates commit 3 s after a 504 (2)", faults: { gatewayTimeoutCreates: 2, createCommitDelayMs: 3000 } },
  {
    name: "access tokens expire mid-run (every 700 ms)",
    during: (api) => {
      const timer = setInterval(() => api.expireAccessTokens(), 700);
      return () => clearInterval(timer);
    },
  },
  { name: "status false on HTTP 200, 5xx every 4th", faults: { errorsAsHttp200: true, serverErrorEvery: 4 } },
  { name: "sortField/sortOrder refused with 400", faults: { rejectSortParams: true }, otherTokens: 60 },
  { name: "page size default 10, max 50, 60 tokens", faults: { defaultPageSize: 10, maxPageSize: 50 }, otherTokens: 60 },
  { name: "page size default 10, max 50, 300 tokens", faults: { defaultPageSize: 10, maxPageSize: 50 }, otherTokens: 300 },
  { name: "a token deleted during a walk, 250 tokens", faults: { deleteOnListRequest: 2, maxPageSize: 50 }, otherTokens: 250 },
];

interface Row {
  scenario: string;
  applies: number | "no";
  duplicates: number;
  /** Managed names with no token on the API after the last apply. */
  missing: number;
  seconds: number;
  note: string;
}

function argValue(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function synthStack(outdir: string): string {
  const app = new App({ outdir });
  const stack = new TerraformStack(app, "matrix");
  new LocalBackend(stack, { path: "terraform.tfstate" });
  const flavors = new Flavors(stack, "gpu", { regionId: "norway-east-1", allowEmpty: true });
  new TerraformOutput(stack, "flavor_count", { value: flavors.count });
  TOKEN_NAMES.forEach((name, i) => {
    const token = new ApiToken(stack, `token-${i}`, { name, description: `matrix token ${i}` });
    new TerraformOutput(stack, `token_${i}_id`, { value: token.tokenId });
  });
  app.synth();
  return path.join(outdir, "stacks", "matrix");
}

async function runScenario(s: Scenario, maxApplies: number, doubles: Awaited<ReturnType<typeof startProviderDoubles>>): Promise<Row> {
  const started = Date.now();
  const api = await startEmulator({ users: [USER] });
  const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-matrix-"));
  const stop = s.during?.(api);
  try {
    for (let i = 0; i < (s.otherTokens ?? 0); i++) api.addToken({ name: `other-${i}`, createdAt: 1_700_000_000 + i });
    const tf = new TerraformRunner(synthStack(outdir), {
      doubles,
      timeoutMs: 300_000,
      env: {
        ...process.env,
        GPUCLOUD_BASE_URL: api.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TIMEOUT_SECONDS: "60",
      },
    });
    await tf.init({ check: true });
    api.setFaults(s.faults ?? {});
    let applies: number | "no" = "no";
    let note = "";
    for (let attempt = 1; attempt <= maxApplies; attempt++) {
      const applied = await tf.apply();
      if (applied.exitCode !== 0) {
        note = lastError(applied.stderr);
        if (process.argv.includes("--verbose")) process.stdout.write(`\n${applied.stdout}\n${applied.stderr}\n`);
        continue;
      }
      const plan = await tf.plan({ detailedExitCode: true });
      if (plan.exitCode === 0) {
        applies = attempt;
        note = "";
        break;
      }
      note = plan.exitCode === 2 ? "plan after apply still has changes" : lastError(plan.stderr);
    }
    const duplicates = TOKEN_NAMES.reduce((sum, name) => sum + Math.max(0, api.tokens().filter((t) => t.name === name).length - 1), 0);
    const missing = TOKEN_NAMES.filter((name) => !api.tokens().some((t) => t.name === name)).length;
    return { scenario: s.name, applies, duplicates, missing, seconds: (Date.now() - started) / 1000, note };
  } finally {
    stop?.();
    await api.close();
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** Terraform's first error, on one line (the scripts redact their own messages). */
function lastError(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.replace(/^[│╷╵\s]+/, "").trim())
    .filter(Boolean);
  const i = lines.findIndex((l) => l.startsWith("Error:"));
  return (i >= 0 ? lines.slice(i, i + 3).join(" ") : (lines.pop() ?? "")).slice(0, 160);
}

async function main(): Promise<number> {
  const tf = terraformAvailable();
  if (!tf.ok) {
    console.log(`fault matrix skipped: ${tf.reason}`);
    return 0;
  }
  const only = argValue("--only");
  const maxApplies = Number(argValue("--max-applies") ?? 3);
  ensureProviderDoublesBuilt();
  const doubles = await startProviderDoubles();
  const rows: Row[] = [];
  try {
    for (const s of SCENARIOS.filter((x) => !only || x.name.includes(only))) {
      process.stdout.write(`[faults] ${s.name} ... `);
      const row = await runScenario(s, maxApplies, doubles);
      rows.push(row);
      process.stdout.write(
        `applies ${row.applies}, duplicates ${row.duplicates}, missing ${row.missing}, ${row.seconds.toFixed(1)} s${row.note ? ` (${row.note})` : ""}\n`,
      );
    }
  } finally {
    await doubles.stop();
  }
  console.log(`\nFault matrix (terraform ${tf.version}; ${TOKEN_NAMES.length} ApiTokens + 1 Flavors; faults on during every apply)`);
  console.log("| scenario | applies to converge | duplicates | missing | wall time |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.scenario} | ${r.applies} | ${r.duplicates} | ${r.missing} | ${r.seconds.toFixed(1)} s |`);
  const failed = rows.filter((r) => r.applies === "no" || r.applies > 2 || r.duplicates > 0 || r.missing > 0);
  console.log(
    failed.length === 0
      ? "\nall scenarios converged within 2 applies with 0 duplicates"
      : `\n${failed.length} scenario(s) missed the target: ${failed.map((r) => r.scenario).join("; ")}`,
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`fault matrix failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
