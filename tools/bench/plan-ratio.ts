/**
 * The plan a user waits for, against the Terraform floor: prints figures, asserts nothing.
 *
 *   npm run bench:ratio                          # N = 50 and 400, 7 alternating runs each
 *   npm run bench:ratio -- --n=50,100,400 --runs=9
 *   npm run bench:ratio -- --n=400 --keep        # leave both folders and print how to plan them by hand
 *   npm run bench:ratio -- --node=<dir>/node_modules/node/bin/node   # scripts on another Node line
 *
 * For each N, two stacks are applied once and then planned alternately (library, floor, library,
 * ...) in one session, so that the load of a shared machine falls on both alike:
 *
 * - library: N ApiTokens, each with two outputs (its id, and its value marked sensitive), and
 *   three lookups (two Flavors, one FlavorPreference), each with one output;
 * - floor: what Terraform costs with trivial programs: N null_resources, one data "external"
 *   per script process the library's steady plan runs (one: the stack's read answers the tokens
 *   and the three lookups), a `node -e` printing a fixed JSON object, and the same number of
 *   outputs, referencing the null_resources and the data source.
 *
 * Both run against the emulator (300 other tokens on the account, pages of 50) and the provider
 * doubles, offline. Every steady plan must be empty (-detailed-exitcode 0), else the bench fails.
 * Printed: the median wall time of each, the median of the per-pair ratios and the ratio of the
 * medians (when the machine's load swings between runs, the two differ: quote both).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken, FlavorPreference, Flavors } from "cdktf-gpucloud";
import { startEmulator } from "cdktf-gpucloud/emulator";

import {
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  terraformAvailable,
  TerraformRunner,
  writeTerraformJson,
} from "../../test/support/terraform";
import { arg, flag, median, numbers } from "./args";

const USER = { username: "bench-bot", password: "bench-password-4e1d" };

/** The library's stack, synthesized into `outdir`; returns the stack folder. */
function libraryStack(outdir: string, n: number): string {
  const app = new App({ outdir });
  const stack = new TerraformStack(app, "bench");
  new LocalBackend(stack, { path: "terraform.tfstate" });
  const h100 = new Flavors(stack, "h100", { regionId: "norway-east-1", gpu: "H100", gpuCount: 1 });
  const a100 = new Flavors(stack, "a100", { gpu: "A100-80G", allowEmpty: true });
  const preferred = new FlavorPreference(stack, "preferred", {
    choices: [{ regionId: "norway-east-1", gpu: "H100", inStockOnly: true, spot: false }, { gpus: ["A100-80G", "L40S"] }],
  });
  new TerraformOutput(stack, "h100_id", { value: h100.cheapestId });
  new TerraformOutput(stack, "a100_count", { value: a100.count });
  new TerraformOutput(stack, "preferred_id", { value: preferred.flavorId });
  for (let i = 0; i < n; i++) {
    const token = new ApiToken(stack, `t${i}`, { name: `bench-${i}` });
    new TerraformOutput(stack, `t${i}_id`, { value: token.tokenId });
    new TerraformOutput(stack, `t${i}_token`, { value: token.token, sensitive: true });
  }
  app.synth();
  return path.join(outdir, "stacks", "bench");
}

/** The floor: the same number of elements, with programs that do nothing. */
function floorStack(dir: string, n: number): string {
  const program = ["node", "-e", `process.stdout.write(JSON.stringify({ id: "x", value: "y" }))`];
  const data: Record<string, unknown> = {};
  data.stack_read = { program, query: { name: "stack-read" } };
  const resources: Record<string, unknown> = {};
  const outputs: Record<string, unknown> = {};
  for (const name of ["h100", "a100", "preferred"]) outputs[`${name}_id`] = { value: `\${data.external.stack_read.result["id"]}` };
  for (let i = 0; i < n; i++) {
    resources[`t${i}`] = { triggers: { name: `floor-${i}` } };
    outputs[`t${i}_id`] = { value: `\${null_resource.t${i}.id}` };
    outputs[`t${i}_token`] = { value: `\${null_resource.t${i}.triggers["name"]}`, sensitive: true };
  }
  return writeTerraformJson(dir, {
    terraform: {
      required_providers: { null: { source: "hashicorp/null" }, external: { source: "hashicorp/external" } },
      backend: { local: { path: "terraform.tfstate" } },
    },
    data: { external: data },
    resource: { null_resource: resources },
    output: outputs,
  });
}

interface Pair {
  library: TerraformRunner;
  floor: TerraformRunner;
}

async function steadyPlanMs(tf: TerraformRunner, what: string): Promise<number> {
  const res = await tf.plan({ detailedExitCode: true, check: true });
  if (res.exitCode !== 0) throw new Error(`the steady plan of the ${what} is not empty:\n${res.stdout}`);
  return res.durationMs;
}

async function main(): Promise<void> {
  const tf = terraformAvailable();
  if (!tf.ok) throw new Error(`terraform is needed: ${tf.reason}`);
  ensureProviderDoublesBuilt();
  const ns = numbers("n", [50, 400]);
  const runs = Number(arg("runs") ?? 7);
  const others = Number(arg("others") ?? 300);
  const maxPageSize = Number(arg("max-page") ?? 50);
  const keep = flag("keep");

  const emulator = await startEmulator({ users: [USER], maxPageSize });
  const doubles: ProviderDoubles = await startProviderDoubles();
  const dirs: string[] = [];
  try {
    for (let i = 0; i < others; i++) emulator.addToken({ name: `other-${i}` });
    // The Node line the scripts (and the floor's `node -e`) run on: the `node` on PATH, or --node.
    const nodeBin = arg("node");
    const env = {
      ...process.env,
      ...(nodeBin ? { PATH: `${path.dirname(path.resolve(nodeBin))}${path.delimiter}${process.env.PATH ?? ""}` } : {}),
      GPUCLOUD_BASE_URL: emulator.url,
      GPUCLOUD_USERNAME: USER.username,
      GPUCLOUD_PASSWORD: USER.password,
    };
    const nodeVersion = execFileSync("node", ["--version"], { env, encoding: "utf8" }).trim();
    console.log(
      `## Steady plan against the Terraform floor (terraform ${tf.version}, node ${nodeVersion}; emulator, ${others} other tokens, ` +
        `pages of ${maxPageSize}; ${runs} alternating runs each)\n`,
    );
    if (Number(/^v(\d+)/.exec(nodeVersion)?.[1] ?? 0) < 22) {
      console.log(
        `Note: node ${nodeVersion} is not a supported line (22, 24, 26) and has no compile cache, so each script process ` +
          "costs more than users see; pass --node=<a node 22+ binary> (e.g. npm install --prefix <dir> node@24).\n",
      );
    }
    console.log(
      "| N tokens | library s (median) | floor s (median) | ratio (median of pairs) | ratio of medians | library ms per token above floor |",
    );
    console.log("|---|---|---|---|---|---|");
    for (const n of ns) {
      const root = mkdtempSync(path.join(tmpdir(), `gpucloud-ratio-${n}-`));
      dirs.push(root);
      const floorDir = path.join(root, "floor");
      mkdirSync(floorDir);
      const pair: Pair = {
        library: new TerraformRunner(libraryStack(path.join(root, "library"), n), { doubles, env, timeoutMs: 900_000 }),
        floor: new TerraformRunner(floorStack(floorDir, n), { doubles, env, timeoutMs: 900_000 }),
      };
      // Two applies, as a pipeline that deploys again leaves it: the second writes nothing, and
      // drops from the state the reads after the writes that the first one made.
      for (const runner of [pair.library, pair.floor]) {
        await runner.init({ check: true });
        await runner.apply({ check: true });
        await runner.apply({ check: true });
      }
      // One plan each first, unmeasured: the file cache and the doubles' first calls.
      await steadyPlanMs(pair.library, "library");
      await steadyPlanMs(pair.floor, "floor");
      const lib: number[] = [];
      const floor: number[] = [];
      const ratios: number[] = [];
      for (let r = 0; r < runs; r++) {
        const l = await steadyPlanMs(pair.library, "library");
        const f = await steadyPlanMs(pair.floor, "floor");
        lib.push(l);
        floor.push(f);
        ratios.push(l / f);
      }
      const perToken = (median(lib) - median(floor)) / n;
      console.log(
        `| ${n} | ${(median(lib) / 1000).toFixed(2)} | ${(median(floor) / 1000).toFixed(2)} | **${median(ratios).toFixed(2)}x** ` +
          `| ${(median(lib) / median(floor)).toFixed(2)}x | ${perToken.toFixed(1)} |`,
      );
      if (keep) {
        const reattach = await pair.library.reattachProviders();
        const floorReattach = await pair.floor.reattachProviders();
        const script = path.join(root, "env.sh");
        writeFileSync(
          script,
          [
            `export GPUCLOUD_BASE_URL='${emulator.url}' GPUCLOUD_USERNAME='${USER.username}' GPUCLOUD_PASSWORD='${USER.password}'`,
            `export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null`,
            `export LIB='${pair.library.dir}' FLOOR='${pair.floor.dir}'`,
            `export TF_REATTACH_LIB='${reattach}'`,
            `export TF_REATTACH_FLOOR='${floorReattach}'`,
            "",
          ].join("\n"),
        );
        console.log(`\nkept: source ${script}; then (cd $LIB && TF_REATTACH_PROVIDERS=$TF_REATTACH_LIB terraform plan)`);
      }
    }
    if (keep) {
      console.log("\nwaiting (emulator and provider doubles up) until this process is stopped");
      await new Promise(() => undefined);
    }
  } finally {
    await doubles.stop();
    await emulator.close();
    if (!keep) for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
