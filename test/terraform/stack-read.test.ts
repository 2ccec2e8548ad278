/**
 * The stack's one plan-time read under real Terraform (offline, through the provider doubles):
 * a steady plan of tokens and lookups runs one script process that logs in once, and merging
 * never makes something unknown at plan that its own read would know: a token's computed name
 * leaves the lookups' attributes known, a lookup's computed query leaves the tokens' in-sync
 * trigger known. Script processes are counted by a `node` on Terraform's PATH that logs each start.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { Fn, TerraformOutput, type TerraformStack } from "cdktf";

import { ApiToken, FlavorPreference, Flavors } from "../../src";
import { SCRIPT_NODE } from "../support/processes";
import { type ChangeJson, describeWithTerraform, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "stack-read-bot", password: "stack-read-pw-51c9" };
/** The cheapest H100 x1 in norway-east-1 of the emulator's seed catalog (see src/emulator/seed.ts). */
const NORWAY_H100X1 = "no1-h100x1-spot";

describeWithTerraform("the stack's one read, under real Terraform", () => {
  const fx = terraformFixture({ users: [USER], timeoutSeconds: 20 });
  let bin: string;
  let log: string;

  beforeAll(() => {
    bin = mkdtempSync(path.join(tmpdir(), "gpucloud-stack-read-bin-"));
    log = path.join(bin, "processes.log");
    writeFileSync(path.join(bin, "node"), `#!/bin/sh\nprintf '%s\\n' "$*" >> "${log}"\nexec "${SCRIPT_NODE}" "$@"\n`);
    chmodSync(path.join(bin, "node"), 0o755);
  });
  afterAll(() => {
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  /** The script commands started since the last call, sorted. */
  const processes = (): string[] => {
    const lines = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
    rmSync(log, { force: true });
    return lines.map((line) => line.split(" ").at(-1)!).sort();
  };
  const stackWith = (build: (stack: TerraformStack) => void): Promise<TerraformRunner> =>
    fx.stack(build, { env: fx.env({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` }), prefix: "gpucloud-stack-read-" });
  const lookups = (stack: TerraformStack) => {
    const h100 = new Flavors(stack, "h100", { regionId: "norway-east-1", gpu: "H100", gpuCount: 1 });
    const a100 = new Flavors(stack, "a100", { gpu: "A100-80G", allowEmpty: true });
    const pick = new FlavorPreference(stack, "pick", {
      choices: [{ regionId: "norway-east-1", gpu: "H100", inStockOnly: true, spot: false }, { gpus: ["A100-80G"] }],
    });
    new TerraformOutput(stack, "h100_id", { value: h100.cheapestId });
    new TerraformOutput(stack, "a100_count", { value: a100.count });
    new TerraformOutput(stack, "pick_id", { value: pick.flavorId });
  };
  const known = (change: ChangeJson | undefined): boolean => change !== undefined && change.after_unknown !== true;

  test("a steady plan of tokens and lookups runs one script process, with one login, one list walk and one catalog call", async () => {
    const tf = await stackWith((stack) => {
      lookups(stack);
      for (let i = 0; i < 3; i++)
        new TerraformOutput(stack, `t${i}_id`, { value: new ApiToken(stack, `t${i}`, { name: `read-steady-${i}` }).tokenId });
    });
    await tf.apply({ check: true });
    const outputs = await tf.output();
    expect([outputs.h100_id.value, outputs.pick_id.value]).toEqual([NORWAY_H100X1, "no1-h100x1"]);
    processes();
    fx.emulator.resetStats();
    const plan = await tf.plan({ detailedExitCode: true });
    expect(plan.exitCode).toBe(0);
    expect(processes()).toEqual(["stack-read"]);
    const stats = fx.emulator.stats();
    expect(stats.logins).toBe(1);
    expect(stats.byRoute["GET /api-tokens"]).toBe(1);
    expect(stats.byRoute["GET /flavors"]).toBe(1);
    expect(stats.tokenWrites).toBe(0);
  });

  test("a token's name known only at apply leaves the lookups' attributes known at plan (they get a read of their own)", async () => {
    const tf = await stackWith((stack) => {
      lookups(stack);
      const seed = new Resource(stack, "seed", {});
      new ApiToken(stack, "computed", { name: `read-computed-${seed.id}` });
    });
    const plan = await tf.plan({});
    expect(plan.exitCode).toBe(0);
    const outputs = plan.plan!.output_changes!;
    expect(known(outputs.h100_id)).toBe(true);
    expect(outputs.h100_id.after).toBe(NORWAY_H100X1);
    expect(known(outputs.pick_id)).toBe(true);
    expect(outputs.pick_id.after).toBe("no1-h100x1");
    expect(known(outputs.a100_count)).toBe(true);
    // The tokens' read is deferred to apply; the lookups' read ran, once for the three.
    expect(processes()).toEqual(["stack-read"]);
    await tf.apply({ check: true, planFile: plan.planFile });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a lookup's query known only at apply leaves the tokens' in-sync trigger known at plan (no replacement)", async () => {
    fx.emulator.addToken({ name: "read-in-sync" });
    const tf = await stackWith((stack) => {
      const seed = new Resource(stack, "seed", {});
      // "H100" once the seed exists: unknown at the first plan.
      const computed = new Flavors(stack, "computed", { regionId: "norway-east-1", gpu: `H100${Fn.substr(seed.id, 0, 0)}`, gpuCount: 1 });
      new TerraformOutput(stack, "computed_id", { value: computed.cheapestId });
      new ApiToken(stack, "token", { name: "read-in-sync" });
    });
    const plan = await tf.plan({});
    expect(plan.exitCode).toBe(0);
    const sync = plan.plan!.resource_changes!.find((rc) => rc.address.startsWith("null_resource.gpucloud_token_sync_"))!;
    expect((sync.change.after as { triggers: Record<string, string> }).triggers.api_in_sync).toBe("true");
    expect(known(plan.plan!.output_changes!.computed_id)).toBe(false);
    await tf.apply({ check: true, planFile: plan.planFile });
    expect((await tf.output()).computed_id.value).toBe(NORWAY_H100X1);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });
});
