/**
 * Plan-cost benchmark of ApiToken: prints figures, asserts nothing.
 *
 *   npm run bench:plan                      # everything
 *   npm run bench:plan -- --plans-only      # skip the synthesis part
 *   npm run bench:plan -- --synth-only
 *   npm run bench:plan -- --n=1,5 --others=0 --max-page=100
 *
 * Part 1 drives real Terraform (offline, provider doubles) against the emulator: for N ApiTokens
 * in one stack and 0 or 300 other tokens on the account, the API requests, logins and token-list
 * calls of the first apply and of a steady (no-change) plan, and the steady plan's wall time
 * (median of 3). Each script process logs in exactly once, so logins per plan = script processes
 * that talked to the API.
 *
 * Part 2 times synthesis (`app.synth()`, median of 3) of 1,000 and 4,000 ApiTokens against the
 * same raw elements declared by hand (null_resource + data.external with equivalent config).
 *
 * The library is imported through its package name, i.e. the built lib/ of the checkout this
 * runs in, so the same file measures any version with the same public API (before/after).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { DataExternal } from "@cdktf/provider-external/lib/data-external";
import { ExternalProvider } from "@cdktf/provider-external/lib/provider";
import { NullProvider } from "@cdktf/provider-null/lib/provider";
import { Resource } from "@cdktf/provider-null/lib/resource";
import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken } from "cdktf-gpucloud";
import { startEmulator } from "cdktf-gpucloud/emulator";

import {
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  terraformAvailable,
  TerraformRunner,
} from "../../test/support/terraform";
import { flag, median, numbers } from "./args";

const USER = { username: "bench-bot", password: "bench-password-4e1d" };

interface Cost {
  requests: number;
  logins: number;
  lists: number;
}

async function planCost(doubles: ProviderDoubles, n: number, others: number, maxPageSize: number): Promise<string> {
  const emulator = await startEmulator({ users: [USER], maxPageSize });
  const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-bench-"));
  try {
    for (let i = 0; i < others; i++) emulator.addToken({ name: `other-${i}` });
    const app = new App({ outdir });
    const stack = new TerraformStack(app, "bench");
    new LocalBackend(stack, { path: "terraform.tfstate" });
    for (let i = 0; i < n; i++) {
      const token = new ApiToken(stack, `t${i}`, { name: `bench-${i}` });
      if (i === 0) new TerraformOutput(stack, "first_id", { value: token.tokenId });
    }
    app.synth();
    const tf = new TerraformRunner(path.join(outdir, "stacks", "bench"), {
      doubles,
      timeoutMs: 600_000,
      env: {
        ...process.env,
        GPUCLOUD_BASE_URL: emulator.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
      },
    });
    await tf.init({ check: true });
    const cost = (): Cost => {
      const s = emulator.stats();
      return { requests: s.requests, logins: s.logins, lists: s.byRoute["GET /api-tokens"] ?? 0 };
    };

    emulator.resetStats();
    await tf.apply({ check: true });
    const apply = cost();

    const times: number[] = [];
    let plan: Cost | undefined;
    for (let i = 0; i < 3; i++) {
      emulator.resetStats();
      const res = await tf.plan({ detailedExitCode: true, check: true });
      if (res.exitCode !== 0) throw new Error(`the steady plan for N=${n} is not empty:\n${res.stdout}`);
      times.push(res.durationMs);
      plan ??= cost();
    }
    const p = plan!;
    return (
      `| ${n} | ${others} | ${maxPageSize} | ${p.requests} | ${p.logins} | ${p.lists} | ${(median(times) / 1000).toFixed(2)} ` +
      `| ${apply.requests} | ${apply.logins} | ${apply.lists} |`
    );
  } finally {
    await emulator.close();
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The elements ApiTokens declare, written by hand: what synthesis would cost without the library. */
function rawElements(stack: TerraformStack, n: number): void {
  new NullProvider(stack, "null");
  new ExternalProvider(stack, "external");
  const query: Record<string, string> = {};
  for (let i = 0; i < n; i++) query[`k${i}.name`] = `raw-${i}`;
  const stackRead = new DataExternal(stack, "stack-read", { program: ["node", "./script.js", "stack-read"], query });
  // One writer: three trigger keys per token, one provisioner (see TokenWriter).
  const triggers: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    triggers[`bench/t${i}.name`] = `raw-${i}`;
    triggers[`bench/t${i}.in_sync`] = `\${${stackRead.fqn}.result["k${i}.in_sync"] == "true" ? "true" : "x"}`;
  }
  const writer = new Resource(stack, "writer", {
    triggers,
    provisioners: [
      {
        type: "local-exec",
        command: "node ./script.js token-writer",
        environment: { GPUCLOUD_WRITER_PLANNED_0: `\${jsonencode(${stackRead.fqn}.result)}` },
      },
    ],
  });
  new DataExternal(stack, "after-write", { program: ["node", "./script.js", "stack-read"], query, dependsOn: [writer] });
}

function synthTime(n: number, build: (stack: TerraformStack, n: number) => void): number {
  const times: number[] = [];
  for (let run = 0; run < 3; run++) {
    const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-bench-synth-"));
    try {
      const started = process.hrtime.bigint();
      const app = new App({ outdir });
      build(new TerraformStack(app, "bench"), n);
      app.synth();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }
  return median(times);
}

async function main(): Promise<void> {
  if (!flag("synth-only")) {
    const tf = terraformAvailable();
    if (!tf.ok) throw new Error(`terraform is needed for the plan part: ${tf.reason}`);
    ensureProviderDoublesBuilt();
    const doubles = await startProviderDoubles();
    try {
      console.log(`## Plan cost (terraform ${tf.version}; emulator default page size 10)\n`);
      console.log(
        "| N tokens | other tokens | max page | plan requests | plan logins | plan list calls | plan s (median of 3) | apply requests | apply logins | apply list calls |",
      );
      console.log("|---|---|---|---|---|---|---|---|---|---|");
      for (const maxPage of numbers("max-page", [100, 50])) {
        for (const others of numbers("others", [0, 300])) {
          // Pages of 50 matter only with many tokens on the account.
          if (maxPage !== 100 && others === 0) continue;
          for (const n of numbers("n", [1, 5, 20, 50])) console.log(await planCost(doubles, n, others, maxPage));
        }
      }
    } finally {
      await doubles.stop();
    }
  }
  if (!flag("plans-only")) {
    console.log("\n## Synthesis time (app.synth(), median of 3)\n");
    console.log("| ApiTokens | library ms | same raw elements by hand ms | ratio |");
    console.log("|---|---|---|---|");
    const library = (stack: TerraformStack, count: number) => {
      for (let i = 0; i < count; i++) new ApiToken(stack, `t${i}`, { name: `synth-${i}` });
    };
    // Warm both paths up first, so neither pays for loading and compiling cdktf alone.
    synthTime(200, library);
    synthTime(200, rawElements);
    for (const n of numbers("synth-n", [1000, 4000])) {
      const lib = synthTime(n, library);
      const raw = synthTime(n, rawElements);
      console.log(`| ${n} | ${lib.toFixed(0)} | ${raw.toFixed(0)} | ${(lib / raw).toFixed(2)} |`);
    }
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
