/**
 * With real Terraform (offline, through the provider doubles) against the emulator: adoption
 * of a token that already exists, the plan-time failures a pipeline must see clearly, and a
 * synthesized folder that is moved after synth.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput, type TerraformStack } from "cdktf";

import { GpuCiStack } from "../../examples/main";
import { Flavors, type FlavorsProps } from "../../src";
import { closedPort } from "../support/closed-port";
import { describeWithTerraform, oneLine, outputChanges, resourceActions, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "pipeline", password: "pipeline-password-90ad" };

describeWithTerraform("real Terraform: adoption, plan-time failures, moved folders", () => {
  const fx = terraformFixture({ users: [USER], timeoutSeconds: 20 });

  /** A fresh stack folder, synthesized and initialized; `env` replaces the credentials (for the failure cases). */
  const stackWith = (build: (stack: TerraformStack) => void, env: NodeJS.ProcessEnv = fx.env()): Promise<TerraformRunner> =>
    fx.stack(build, { env: { ...process.env, ...env } });

  const flavorsStack = (props: FlavorsProps) => (stack: TerraformStack) => {
    const f = new Flavors(stack, "gpu", props);
    new TerraformOutput(stack, "cheapest", { value: f.cheapestId });
    new TerraformOutput(stack, "count", { value: f.count });
    new TerraformOutput(stack, "price", { value: f.cheapestPrice });
    new TerraformOutput(stack, "ids", { value: f.ids });
  };

  test("a token that exists before the first apply is adopted, not duplicated", async () => {
    const existing = fx.emulator.addToken({ name: "ci-adopt", description: "made in the console" });
    const folder = fx.folder({ prefix: "gpucloud-adopt-", stackId: "gpu-ci" });
    folder.synthApp(
      (app) => new GpuCiStack(app, "gpu-ci", { regionId: "norway-east-1", tokenName: "ci-adopt", tokenDescription: "managed now" }),
    );
    const tf = await fx.init(folder.dir);

    const plan = await tf.plan({ check: true });
    const actions = Object.entries(resourceActions(plan.plan!)).filter(([address]) => address.startsWith("null_resource."));
    expect(actions).toEqual([["null_resource.gpucloud_token_writer", ["create"]]]);
    // The plan-time read found the token by its name: the reviewer sees its id before anything is written.
    expect(outputChanges(plan.plan!).token_id.after).toBe(existing.id);
    const applied = await tf.apply({ planFile: plan.planFile, check: true });
    expect(oneLine(applied.stdout)).toContain(`API token "ci-adopt" (id ${existing.id}) for gpu-ci/ci-token: updated the description`);
    expect(oneLine(applied.stdout)).not.toContain("created API token");
    expect(fx.emulator.tokens().filter((t) => t.name === "ci-adopt")).toEqual([
      expect.objectContaining({ id: existing.id, description: "managed now", token: existing.token }),
    ]);
    expect((await tf.output()).token_id.value).toBe(existing.id);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a flavor filter with matches: the cheapest, count and ids, decoded", async () => {
    const tf = await stackWith(flavorsStack({ gpu: "a100", spot: false, inStockOnly: true }));
    await tf.apply({ check: true });
    const out = await tf.output();
    // In-stock, on-demand A100 (any variant) of all regions: ca1 A100-80G-PCIe x1 1.70 and x2
    // 3.40, ca1 A100-80G-SXM4 x8 13.60 (the no1 and us1 x1 omit stock_available, so they do not
    // count as in stock; the A100-40G-SXM4 flavors are out of stock).
    expect(out.ids.value).toEqual(["ca1-a100x1", "ca1-a100x2", "ca1-a100-sxm4x8"]);
    expect(out.count.value).toBe(3);
    expect(out.cheapest.value).toBe("ca1-a100x1");
    expect(out.price.value).toBe(1.7);
  });

  test("a flavor filter that matches nothing fails the plan, saying what the region offers", async () => {
    const tf = await stackWith(flavorsStack({ regionId: "canada-central-1", gpu: "H100" }));
    const plan = await tf.plan();
    expect(plan.exitCode).toBe(1);
    const message = oneLine(plan.stderr);
    expect(message).toContain('Flavors "s/gpu": no flavor matches (region id canada-central-1, gpu H100). region "Canada Central"');
    expect(message).toMatch(/A100/);
    expect(message).toContain("Canada Central");
  });

  test("allowEmpty turns no match into an empty result with null numbers", async () => {
    const tf = await stackWith(flavorsStack({ regionId: "canada-central-1", gpu: "H100", allowEmpty: true }));
    await tf.apply({ check: true });
    const out = await tf.output();
    expect(out.count.value).toBe(0);
    expect(out.ids.value).toEqual([]);
    expect(out.cheapest.value).toBe("");
    // Terraform drops null outputs from `terraform output`.
    expect(out.price).toBeUndefined();
  });

  test("bad credentials fail the plan, naming the variables to set and no secret", async () => {
    const wrong = await stackWith(flavorsStack({ gpu: "H100" }), fx.env({ GPUCLOUD_PASSWORD: "not-the-password-4242" }));
    const plan = await wrong.plan();
    expect(plan.exitCode).toBe(1);
    expect(oneLine(plan.stderr)).toMatch(/invalid username or password/i);
    // One data source reads for every lookup of the stack: the message names the lookups of the account.
    expect(oneLine(plan.stderr)).toContain('(read for Flavors "s/gpu")');
    expect(plan.stderr + plan.stdout).not.toContain("not-the-password-4242");

    const none = await stackWith(flavorsStack({ gpu: "H100" }), { GPUCLOUD_BASE_URL: fx.emulator.url });
    const missing = await none.plan();
    expect(missing.exitCode).toBe(1);
    const text = oneLine(missing.stderr);
    expect(text).toContain('(read for Flavors "s/gpu")');
    for (const variable of ["GPUCLOUD_API_TOKEN", "GPUCLOUD_USERNAME", "GPUCLOUD_PASSWORD", "GPUCLOUD_PASSWORD_MD5"]) {
      expect(text).toContain(variable);
    }
  });

  test("an API that is down fails the plan within the configured time, no hang", async () => {
    const port = await closedPort();
    const tf = await stackWith(
      flavorsStack({ gpu: "H100" }),
      fx.env({ GPUCLOUD_BASE_URL: `http://127.0.0.1:${port}`, GPUCLOUD_TIMEOUT_SECONDS: "3" }),
    );
    const started = Date.now();
    const plan = await tf.plan({ timeoutMs: 60_000 });
    const seconds = (Date.now() - started) / 1000;
    expect(plan.timedOut).toBe(false);
    expect(plan.exitCode).toBe(1);
    expect(seconds).toBeLessThan(30);
    expect(oneLine(plan.stderr)).toMatch(/list flavors \(GET \/flavors\)/);
  });

  test("an API that hangs fails the plan within the configured time, no hang", async () => {
    fx.emulator.setFaults({ latencyMs: 60_000, paths: ["/flavors"] });
    try {
      const tf = await stackWith(flavorsStack({ gpu: "H100" }), fx.env({ GPUCLOUD_TIMEOUT_SECONDS: "3" }));
      const started = Date.now();
      const plan = await tf.plan({ timeoutMs: 60_000 });
      expect(plan.timedOut).toBe(false);
      expect(plan.exitCode).toBe(1);
      expect((Date.now() - started) / 1000).toBeLessThan(30);
      expect(oneLine(plan.stderr)).toMatch(/timed out|timeout|gave up/i);
    } finally {
      fx.emulator.setFaults({});
    }
  });

  test("a synthesized folder moved after synth still plans and applies", async () => {
    const { outdir, dir } = fx
      .folder({ prefix: "gpucloud-moved-src-", stackId: "gpu-ci" })
      .synthApp((app) => new GpuCiStack(app, "gpu-ci", { regionId: "norway-east-1", tokenName: "ci-moved", tokenDescription: "portable" }));
    const moved = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-moved-dst-")), "elsewhere");
    cpSync(dir, moved, { recursive: true });
    rmSync(outdir, { recursive: true, force: true });
    // Nothing in the configuration points back at the synth machine's folders.
    expect(readFileSync(path.join(moved, "cdk.tf.json"), "utf8")).not.toContain(outdir);

    const tf = await fx.init(moved);
    await tf.apply({ check: true });
    const out = await tf.output();
    expect(out.flavor_id.value).toBe("no1-h100x1");
    expect(out.preferred_flavor_id.value).toBe("no1-h100x1");
    expect(out.preferred_choice.value).toBe(0);
    expect(fx.emulator.tokens().filter((t) => t.name === "ci-moved")).toHaveLength(1);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });
});
