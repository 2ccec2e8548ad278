/**
 * ApiToken's identity under real Terraform (offline, through the provider doubles) against the
 * emulator: a token is never handed to another run, workspace or name by accident, renames keep
 * the id where they are meant to, and nothing is silent. Each case asserts the plan or the log
 * AND the API's state.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput, TerraformResource, type TerraformStack } from "cdktf";

import { ApiToken, type ApiTokenProps, Flavors } from "../../src";
import { md5HexOfUtf8 } from "../../src/client/md5";
import { startEmulator } from "../../src/emulator";
import { withoutNodeLineWarning } from "../support/processes";
import { expectSteadyPlan } from "../support/steady-plan";
import { describeWithTerraform, oneLine, outputChanges, resourceActions, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "identity-bot", password: "identity-password-9a7e" };

describeWithTerraform("ApiToken identity under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });
  const env = fx.env;

  /** One stack folder, synthesized again before each step as `cdktf deploy` does. */
  class Project {
    readonly folder = fx.folder({ prefix: "gpucloud-identity-", stackId: "tokens" });
    readonly dir = this.folder.dir;
    tf!: TerraformRunner;

    synth(build: (stack: TerraformStack) => void): this {
      this.folder.synth(build);
      return this;
    }

    async init(runnerEnv: NodeJS.ProcessEnv = env()): Promise<TerraformRunner> {
      this.tf = this.runner(runnerEnv);
      await this.tf.init({ check: true });
      return this.tf;
    }

    runner(runnerEnv: NodeJS.ProcessEnv): TerraformRunner {
      return fx.runner(this.dir, { env: runnerEnv, timeoutMs: 120_000 });
    }

    async steady(): Promise<void> {
      await expectSteadyPlan(this.tf);
    }
  }

  /** One ApiToken "ci", its id as an output, optionally with a create_before_destroy consumer. */
  const tokenStack =
    (props: ApiTokenProps, opts: { consumer?: boolean } = {}) =>
    (stack: TerraformStack) => {
      const token = new ApiToken(stack, "ci", props);
      new TerraformOutput(stack, "token_id", { value: token.tokenId });
      if (opts.consumer) {
        // Terraform propagates create_before_destroy to what this depends on: the stack's token writer.
        // A plain TerraformResource (not @cdktf/provider-null), so the suite also runs on CDK Terrain.
        const consumer = new TerraformResource(stack, "consumer", {
          terraformResourceType: "null_resource",
          terraformGeneratorMetadata: { providerName: "null" },
          lifecycle: { createBeforeDestroy: true },
        });
        consumer.addOverride("triggers", { token_id: token.tokenId });
      }
    };

  const named = fx.named;

  test("destroy, then a deploy with another name: a new token; the destroyed one is not renamed", async () => {
    const p = new Project().synth(tokenStack({ name: "dd-old" }));
    const tf = await p.init();
    await tf.apply({ check: true });
    const [old] = named("dd-old");
    const destroyed = oneLine((await tf.destroy({ check: true })).stdout);
    // What the destroy leaves behind is said then, by the stack's roster; the state keeps no ledger after it.
    expect(destroyed).toContain(
      `WARNING: API token "dd-old" on the account GPUCLOUD_* stays ACTIVE: the stack is being destroyed, and the GPU cloud API has no delete operation`,
    );

    p.synth(tokenStack({ name: "dd-new" }));
    const applied = oneLine((await tf.apply({ check: true })).stdout);
    expect(named("dd-old")).toEqual([expect.objectContaining({ id: old.id, token: old.token, name: "dd-old" })]);
    expect(named("dd-new")).toHaveLength(1);
    expect(named("dd-new")[0].id).not.toBe(old.id);
    expect(applied).toContain(`created API token "dd-new" (id ${named("dd-new")[0].id}) for tokens/ci`);
    expect(applied).not.toContain("renamed");
    expect((await tf.output()).token_id.value).toBe(named("dd-new")[0].id);
    await p.steady();
  });

  test("two workspaces in one folder: prod's first apply never gets staging's token", async () => {
    const p = new Project().synth(tokenStack({ name: "stg-ci" }));
    const tf = await p.init();
    tf.newWorkspace("staging");
    await tf.apply({ check: true });
    const [staging] = named("stg-ci");
    await tf.destroy({ check: true });

    p.synth(tokenStack({ name: "prod-ci" }));
    tf.newWorkspace("prod");
    await tf.apply({ check: true });
    expect(named("stg-ci")).toEqual([expect.objectContaining({ id: staging.id, token: staging.token })]);
    const [prod] = named("prod-ci");
    expect(prod.id).not.toBe(staging.id);
    expect(prod.token).not.toBe(staging.token);
    expect((await tf.output()).token_id.value).toBe(prod.id);
    await p.steady();
  });

  test("rename under a create_before_destroy consumer with previousNames: the same token", async () => {
    const p = new Project().synth(tokenStack({ name: "cbd-a" }, { consumer: true }));
    const tf = await p.init();
    await tf.apply({ check: true });
    const [before] = named("cbd-a");
    const count = fx.emulator.tokens().length;

    p.synth(tokenStack({ name: "cbd-b", previousNames: ["cbd-a"] }, { consumer: true }));
    const plan = await tf.plan({ check: true });
    // The writer is replaced create-before-destroy, naming the field; the consumer sees the same id, known at plan.
    expect(oneLine(plan.stdout)).toMatch(/\+\/- create replacement and then destroy/);
    expect(oneLine(plan.stdout)).toMatch(/~ "tokens\/ci\.name" = "cbd-a" -> "cbd-b"/);
    const actions = resourceActions(plan.plan!);
    expect(actions["null_resource.gpucloud_token_writer"]).toEqual(["create", "delete"]);
    expect(actions["null_resource.consumer"]).toEqual(["no-op"]);
    expect(outputChanges(plan.plan!).token_id).toMatchObject({ actions: ["no-op"], after: before.id });
    const applied = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    expect(applied).toContain(`API token "cbd-a" (id ${before.id}) for tokens/ci: renamed "cbd-a" to "cbd-b"`);
    expect(applied).not.toContain("created API token");
    expect(withoutNodeLineWarning(applied)).not.toContain("WARNING");
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect(named("cbd-b")).toEqual([expect.objectContaining({ id: before.id, token: before.token })]);
    await p.steady();
  });

  test("rename under a create_before_destroy consumer without previousNames: the same token, from the state's ledger", async () => {
    const p = new Project().synth(tokenStack({ name: "cbd2-a" }, { consumer: true }));
    const tf = await p.init();
    await tf.apply({ check: true });
    const [old] = named("cbd2-a");
    const count = fx.emulator.tokens().length;

    p.synth(tokenStack({ name: "cbd2-b" }, { consumer: true }));
    const plan = await tf.plan({ check: true });
    // Known at plan: the consumer sees the same id.
    expect(oneLine(plan.stdout)).not.toContain("known after apply) # forces replacement");
    expect(oneLine(plan.stdout)).toMatch(/~ "tokens\/ci\.name" = "cbd2-a" -> "cbd2-b"/);
    expect(resourceActions(plan.plan!)["null_resource.consumer"]).toEqual(["no-op"]);
    expect(outputChanges(plan.plan!).token_id).toMatchObject({ actions: ["no-op"], after: old.id });
    const applied = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    expect(applied).toContain(`API token "cbd2-a" (id ${old.id}) for tokens/ci: renamed "cbd2-a" to "cbd2-b"`);
    expect(applied).not.toContain("created API token");
    expect(withoutNodeLineWarning(applied)).not.toContain("WARNING");
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect(named("cbd2-b")).toEqual([expect.objectContaining({ id: old.id, token: old.token })]);
    await p.steady();
  });

  test("baseUrl added to an existing ApiToken, then removed: every apply works, same token", async () => {
    const p = new Project().synth(tokenStack({ name: "bu-ci" }));
    const tf = await p.init();
    await tf.apply({ check: true });
    const [token] = named("bu-ci");

    p.synth(tokenStack({ name: "bu-ci", baseUrl: fx.emulator.url }));
    await tf.apply({ check: true });
    await p.steady();
    p.synth(tokenStack({ name: "bu-ci" }));
    await tf.apply({ check: true });
    await p.steady();
    expect(named("bu-ci")).toEqual([expect.objectContaining({ id: token.id, token: token.token })]);
  });

  test("description managed, then not: the last managed value stays; no changes after", async () => {
    const p = new Project().synth(tokenStack({ name: "desc-ci", description: "managed" }));
    const tf = await p.init();
    await tf.apply({ check: true });
    const [token] = named("desc-ci");
    expect(token.description).toBe("managed");

    p.synth(tokenStack({ name: "desc-ci" }));
    await tf.apply({ check: true });
    await p.steady();
    expect(named("desc-ci")).toEqual([expect.objectContaining({ id: token.id, description: "managed" })]);
  });

  test("a rename whose write failed is finished by the next apply: same token, from the ledger the failed apply left as it was", async () => {
    const p = new Project().synth(tokenStack({ name: "fr-a" }));
    const tf = await p.init();
    await tf.apply({ check: true });
    const [token] = named("fr-a");
    const count = fx.emulator.tokens().length;

    p.synth(tokenStack({ name: "fr-b" }));
    fx.emulator.setFaults({ paths: ["/api-tokens/"], serverErrorRate: 1 });
    try {
      // A short budget, so the write gives up quickly.
      const failed = await p.runner(env({ GPUCLOUD_TIMEOUT_SECONDS: "3" })).apply();
      expect(failed.exitCode).not.toBe(0);
      const log = oneLine(failed.stdout + failed.stderr);
      expect(log).toContain("1 of 1 API tokens were not written (every other one was)");
      expect(log).toContain(`tokens/ci ("fr-b"):`);
    } finally {
      fx.emulator.setFaults({});
    }
    expect(named("fr-a")).toEqual([expect.objectContaining({ id: token.id })]);
    expect(named("fr-b")).toHaveLength(0);
    // The failed apply wrote no ledger (it was unknown at plan): the state still says "fr-a" for this path.
    expect(JSON.parse((await tf.output()).gpucloud_token_ledger.value as string).t["tokens/ci"]).toEqual([
      "fr-a",
      token.id,
      expect.any(String),
      "",
    ]);

    const plan = await tf.plan({ check: true });
    expect(oneLine(plan.stdout)).toContain("null_resource.gpucloud_token_writer is tainted, so must be replaced");
    expect(outputChanges(plan.plan!).token_id).toMatchObject({ actions: ["no-op"], after: token.id });
    const retried = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    expect(retried).toContain(`API token "fr-a" (id ${token.id}) for tokens/ci: renamed "fr-a" to "fr-b"`);
    expect(retried).not.toContain("created API token");
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect(named("fr-b")).toEqual([expect.objectContaining({ id: token.id, token: token.token })]);
    await p.steady();
  });

  test("previousNames on a fresh runner (no state): the token is renamed, never a new one", async () => {
    const first = new Project().synth(tokenStack({ name: "fresh-a" }));
    await (await first.init()).apply({ check: true });
    const [token] = named("fresh-a");
    const count = fx.emulator.tokens().length;

    const fresh = new Project().synth(tokenStack({ name: "fresh-b", previousNames: ["gone", "fresh-a"] }));
    const tf = await fresh.init();
    const plan = await tf.plan({ check: true });
    const actions = resourceActions(plan.plan!);
    expect(Object.entries(actions).filter(([a]) => a.startsWith("null_resource."))).toEqual([
      ["null_resource.gpucloud_token_writer", ["create"]],
    ]);
    // Found by a previous name at plan: its id is known, so no read after the writes.
    expect(outputChanges(plan.plan!).token_id).toMatchObject({ actions: ["create"], after: token.id });
    expect(Object.keys(actions).filter((address) => address.includes("after-write"))).toEqual([]);
    const applied = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    expect(applied).toContain(`API token "fresh-a" (id ${token.id}) for tokens/ci: renamed "fresh-a" to "fresh-b"`);
    expect(applied).not.toContain("created API token");
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect(named("fresh-b")).toEqual([expect.objectContaining({ id: token.id, token: token.token })]);
    await fresh.steady();
  });

  test("a description with ${x} and %{y} reaches the API literally", async () => {
    const p = new Project().synth(tokenStack({ name: "esc-${x}", description: "uses ${var.y} and %{ if z }" }));
    const tf = await p.init();
    await tf.apply({ check: true });
    expect(named("esc-${x}")).toEqual([expect.objectContaining({ description: "uses ${var.y} and %{ if z }" })]);
    await p.steady();
  });

  test("changing one token leaves another token's attributes known in the plan", async () => {
    const two = (descriptionA: string) => (stack: TerraformStack) => {
      const a = new ApiToken(stack, "a", { name: "known-a", description: descriptionA });
      const b = new ApiToken(stack, "b", { name: "known-b" });
      new TerraformOutput(stack, "a_id", { value: a.tokenId });
      new TerraformOutput(stack, "b_id", { value: b.tokenId });
      new TerraformOutput(stack, "b_created", { value: b.createdAt });
    };
    const p = new Project().synth(two("v1"));
    const tf = await p.init();
    await tf.apply({ check: true });
    p.synth(two("v2"));
    const plan = await tf.plan({ check: true });
    const outputs = outputChanges(plan.plan!);
    expect(outputs.b_id.actions).toEqual(["no-op"]);
    expect(outputs.b_id.after).toBe(named("known-b")[0].id);
    expect(outputs.b_created.actions).toEqual(["no-op"]);
    // The changed token's own id stays known too: an update keeps it.
    expect(outputs.a_id.actions).toEqual(["no-op"]);
    expect(outputs.a_id.after).toBe(named("known-a")[0].id);
    expect(Object.entries(resourceActions(plan.plan!)).filter(([, actions]) => !["read", "no-op"].includes(actions.join()))).toEqual([
      ["null_resource.gpucloud_token_writer", ["delete", "create"]],
    ]);
    // The plan names the token and the field that change, and hides the other token's keys.
    const text = oneLine(plan.stdout);
    expect(text).toMatch(/~ "tokens\/a\.description" = "v1" -> "v2"/);
    expect(text).not.toContain('"tokens/b.');
    await tf.apply({ check: true });
    expect(named("known-a")).toEqual([expect.objectContaining({ description: "v2" })]);
    await p.steady();
  });

  test("30 tokens: a token recreated after a console delete is the one read after the writes, and every output is right", async () => {
    // A token deleted in the console: the plan-time read cannot know the id of the one to be created.
    const stack30 = (stack: TerraformStack) => {
      for (let i = 0; i < 30; i++) {
        const token = new ApiToken(stack, `t${i}`, { name: `grp-${i}`, description: "d" });
        new TerraformOutput(stack, `id${i}`, { value: token.tokenId });
        if (i === 0 || i === 29) new TerraformOutput(stack, `token${i}`, { value: token.token, sensitive: true });
      }
    };
    const p = new Project().synth(stack30);
    const tf = await p.init();
    await tf.apply({ check: true, timeoutMs: 300_000 });
    const outputs = await tf.output();
    for (let i = 0; i < 30; i++) expect(outputs[`id${i}`].value).toBe(named(`grp-${i}`)[0].id);
    expect(outputs.token0.value).toBe(named("grp-0")[0].token);
    expect(outputs.token29.value).toBe(named("grp-29")[0].token);
    await p.steady();

    fx.emulator.deleteToken(named("grp-27")[0].id);
    const plan = await tf.plan({ check: true });
    const changes = outputChanges(plan.plan!);
    expect(changes.id0.actions).toEqual(["no-op"]);
    expect(changes.id26.actions).toEqual(["no-op"]);
    expect(changes.id26.after).toBe(named("grp-26")[0].id);
    expect(changes.id27.actions).toEqual(["update"]);
    const actions = resourceActions(plan.plan!);
    expect(Object.entries(actions).filter(([, a]) => !["read", "no-op"].includes(a.join()))).toEqual([
      ["null_resource.gpucloud_token_writer", ["delete", "create"]],
    ]);
    expect(oneLine(plan.stdout)).toMatch(/~ "tokens\/t27\.in_sync" = "true" -> \(known after apply\)/);
    // The account's one read after the writes waits for the writer and reads t27 alone (its new_slots).
    const reads = (plan.plan!.resource_changes ?? []).filter((rc) => rc.address.includes("after-write"));
    expect(reads.map((rc) => rc.address)).toEqual([
      expect.stringMatching(/^data\.external\.gpucloud-stack-read_after-write_[0-9A-F]+\[0\]$/),
    ]);
    expect((reads[0].change.after as { query: Record<string, string> }).query.new_slots).toBe("t27");
    const applied = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    const [recreated] = named("grp-27");
    expect(applied).toContain(`created API token "grp-27" (id ${recreated.id}) for tokens/t27`);
    expect(applied).toContain("gpucloud: 1 of 1 tokens written");
    expect(fx.emulator.tokens().filter((t) => t.name.startsWith("grp-"))).toHaveLength(30);
    const after = await tf.output();
    expect(after.id27.value).toBe(recreated.id);
    for (let i = 0; i < 30; i++) expect(after[`id${i}`].value).toBe(named(`grp-${i}`)[0].id);
    await p.steady();
  });

  test("two ApiTokens with the same name fail at synth, before Terraform runs", () => {
    expect(() =>
      new Project().synth((stack) => {
        new ApiToken(stack, "one", { name: "same" });
        new ApiToken(stack, "two", { name: "same" });
      }),
    ).toThrow(/ApiToken "tokens\/two": name "same" is also the name of ApiToken "tokens\/one"/);
  });

  test("an apply logs in once per process and account: 3 with a create, 2 with updates only, whatever the number of tokens; nothing of the run is left outside the state", async () => {
    const p = new Project().synth((stack) => {
      for (let i = 0; i < 6; i++) new ApiToken(stack, `t${i}`, { name: `login-${i}`, description: "v1" });
    });
    // A temp folder of this test's own: nothing of the run may be left in it.
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-identity-tmp-"));
    const runnerEnv = { ...env(), TMPDIR: tmp };
    const tf = await p.init(runnerEnv);
    fx.emulator.resetStats();
    await tf.apply({ check: true });
    // The plan-time read, the writer (all six creates), the read after the writes.
    expect(fx.emulator.stats().logins).toBe(3);
    expect(fx.emulator.tokens().filter((t) => t.name.startsWith("login-"))).toHaveLength(6);

    p.synth((stack) => {
      for (let i = 0; i < 6; i++) new ApiToken(stack, `t${i}`, { name: `login-${i}`, description: "v2" });
    });
    fx.emulator.resetStats();
    const applied = oneLine((await tf.apply({ check: true })).stdout);
    // Every id is known at plan: the plan-time read and the writer (six updates); no read after the writes.
    expect(fx.emulator.stats().logins).toBe(2);
    expect(fx.emulator.stats().tokenWrites).toBe(6);
    expect(applied).toContain("gpucloud: 6 of 6 tokens written");
    expect(fx.emulator.tokens().filter((t) => t.name.startsWith("login-") && t.description === "v2")).toHaveLength(6);
    // No session, walk, lock or record: nothing in the temp folder, no hand-off folder in the stack folder.
    expect(readdirSync(tmp).filter((f) => f.includes("gpucloud"))).toEqual([]);
    expect(existsSync(path.join(p.dir, ".gpucloud-handoff"))).toBe(false);
    // Nothing of the password in the stack folder (the state, the plan's files, the inputs), Terraform's own providers aside.
    for (const file of filesUnder(p.dir, [".terraform"])) {
      const text = readFileSync(file, "utf8");
      for (const secret of [USER.password, md5HexOfUtf8(USER.password)])
        expect({ file, has: text.includes(secret) }).toEqual({ file, has: false });
    }
    await p.steady();
  });

  test("a first apply walks the account twice (its plan, its writer), then reads newest-first once per wave of creates and once after the writes", async () => {
    const big = await startEmulator({ users: [USER], faults: { maxPageSize: 10 } });
    try {
      for (let i = 0; i < 95; i++) big.addToken({ name: `other-${i}`, createdAt: 1_700_000_000 + i });
      const p = new Project().synth((stack) => {
        for (let i = 0; i < 6; i++) new ApiToken(stack, `t${i}`, { name: `walk-${i}` });
      });
      const tf = await p.init(env({ GPUCLOUD_BASE_URL: big.url }));
      big.resetStats();
      await tf.apply({ check: true });
      const lists = big.stats().byRoute["GET /api-tokens"] ?? 0;
      // A walk of 95 tokens in pages of 10 takes 10 or 11 requests: the plan-time read's and the writer's;
      // then the writer's one newest-first read before its one wave, and the read after the writes'
      // newest-first read of the 6 created since the plan's mark (one page). Walking per create: 10 more each.
      expect(lists).toBeLessThanOrEqual(2 * 11 + 1 + 1);
      expect(big.stats().byRoute["POST /api-tokens"]).toBe(6);
      expect(big.tokens().filter((t) => t.name.startsWith("walk-"))).toHaveLength(6);
      await p.steady();
    } finally {
      await big.close();
    }
  });

  test("a steady plan costs one login, one list walk and one catalog read for all tokens and the Flavors, whatever N", async () => {
    const pages = await startEmulator({ users: [USER], maxPageSize: 10 });
    try {
      for (let i = 0; i < 35; i++) pages.addToken({ name: `other-${i}` });
      const costs: Array<{ logins: number; lists: number; flavors: number; requests: number }> = [];
      for (const n of [1, 8]) {
        const p = new Project().synth((stack) => {
          new Flavors(stack, "h100", { regionId: "norway-east-1", gpu: "H100", gpuCount: 1 });
          for (let i = 0; i < n; i++) new ApiToken(stack, `t${i}`, { name: `steady-${n}-${i}` });
        });
        const tf = await p.init(env({ GPUCLOUD_BASE_URL: pages.url }));
        await tf.apply({ check: true });
        pages.resetStats();
        await p.steady();
        const stats = pages.stats();
        costs.push({
          logins: stats.logins,
          lists: stats.byRoute["GET /api-tokens"] ?? 0,
          flavors: stats.byRoute["GET /flavors"] ?? 0,
          requests: stats.requests,
        });
        expect(stats.tokenWrites).toBe(0);
      }
      // One process, the stack's read, for the tokens and the Flavors: one login.
      expect(costs[0].logins).toBe(1);
      expect(costs[1].logins).toBe(1);
      // One walk of 36 or 43 tokens in pages of at most 10.
      expect(costs[0].lists).toBeGreaterThanOrEqual(4);
      expect(costs[0].lists).toBeLessThanOrEqual(5);
      expect(costs[1].lists).toBeGreaterThanOrEqual(5);
      expect(costs[1].lists).toBeLessThanOrEqual(6);
      expect(costs[0].flavors).toBe(1);
      expect(costs[1].flavors).toBe(costs[0].flavors);
    } finally {
      await pages.close();
    }
  });
});

/** Every file under `dir`, recursively, but for the folders named in `skip`. */
function filesUnder(dir: string, skip: readonly string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return skip.includes(entry.name) ? [] : filesUnder(full, skip);
    return entry.isFile() ? [full] : [];
  });
}
