/**
 * The account a stack manages, on the runner shape most pipelines have: every job a fresh checkout,
 * a fresh synth in a fresh folder with a temp folder of its own, the state in a remote backend
 * (Terraform's pg backend on the suite's PostgreSQL). What the last apply managed comes from the
 * state (the ledger output), so a fresh runner is protected as a kept folder is: another account
 * fails the plan, whatever the API address; a move on purpose is one variable; a removed ApiToken is
 * warned in the plan; another address of the same account changes no resource. docs/accounts.md.
 */

import { TerraformOutput, TerraformResource, type TerraformStack } from "cdktf";

import { ApiToken, GpuCloudAccount } from "../../src";
import type { RunningEmulator } from "../../src/emulator";
import type { TestAccount } from "../support/api-credentials";
import { type JobVariables, pipelineJob } from "../support/pipeline-job";
import { describeWithTerraformAndPostgres, postgresFixture } from "../support/postgres";
import { expectSteadyPlan } from "../support/steady-plan";
import { oneLine } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const STAGING = { username: "fr-staging-bot", password: "fr-staging-pw-3a9c" };
const PROD = { username: "fr-prod-bot", password: "fr-prod-pw-81e4" };

describeWithTerraformAndPostgres("the account a stack manages, on fresh runners with remote state", () => {
  // The fixture's emulator is staging's API; prod's is another, at another address.
  const fx = terraformFixture({ users: [STAGING] });
  const pg = postgresFixture();
  let prodApi: RunningEmulator;
  beforeAll(async () => {
    prodApi = await fx.startEmulator({ users: [PROD] });
  });
  const address = (api: RunningEmulator) => api.url.replace(/\/+$/, "");
  const staging = () => ({ api: fx.emulator, user: STAGING as TestAccount });
  const prod = () => ({ api: prodApi, user: PROD as TestAccount });

  const job = (connStr: string, build: (stack: TerraformStack) => void, vars: JobVariables, over: NodeJS.ProcessEnv = {}) =>
    pipelineJob(fx, connStr, build, vars, over);
  const tokens =
    (...names: string[]) =>
    (stack: TerraformStack) => {
      for (const name of names) {
        const token = new ApiToken(stack, name, { name });
        new TerraformOutput(stack, `${name}_id`, { value: token.tokenId });
      }
    };
  const named = (api: RunningEmulator, name: string) => api.tokens().filter((t) => t.name === name);

  test("prod planned with staging's whole set of variables fails the plan, naming both sides; staging's token of the name is not taken", async () => {
    const db = await pg.createDatabase("switch");
    await (await job(db, tokens("fr-ci"), prod())).apply({ check: true });
    const [prodToken] = named(prodApi, "fr-ci");
    // Staging has its own token of that name: it would resolve there.
    fx.emulator.addToken({ name: "fr-ci" });

    const wrong = await job(db, tokens("fr-ci"), staging());
    const plan = await wrong.plan();
    expect(plan.exitCode).toBe(1);
    const said = oneLine(plan.stderr);
    expect(said).toContain(
      `the credentials of account GPUCLOUD_* log in as user ${STAGING.username} at ${address(fx.emulator)}, but the last apply of ` +
        `this stack (workspace "default") managed its API tokens as user ${PROD.username} at ${address(prodApi)}, and these ` +
        `credentials list none of them: "fr-ci" (id ${prodToken.id}).`,
    );
    for (const secret of [STAGING.password, PROD.password]) expect(plan.stderr + plan.stdout).not.toContain(secret);
    // Nothing applied: prod's state still names prod's token.
    const again = await job(db, tokens("fr-ci"), prod());
    expect((await again.output())["fr-ci_id"].value).toBe(prodToken.id);
    await expectSteadyPlan(again);
  });

  test("moving a stack of two tokens to another account on purpose: one failed plan names both, one variable moves both", async () => {
    const db = await pg.createDatabase("move");
    await (await job(db, tokens("fr-mv-a", "fr-mv-b"), prod())).apply({ check: true });
    const old = ["fr-mv-a", "fr-mv-b"].map((n) => named(prodApi, n)[0]);

    const refused = await (await job(db, tokens("fr-mv-a", "fr-mv-b"), staging())).plan();
    expect(refused.exitCode).toBe(1);
    const said = oneLine(refused.stderr);
    for (const t of old) expect(said).toContain(`"${t.name}" (id ${t.id})`);
    const label = `user ${STAGING.username} at ${address(fx.emulator)}`;
    expect(said).toContain(`GPUCLOUD_MOVE_TO="${label}"`);

    const moving = await job(db, tokens("fr-mv-a", "fr-mv-b"), staging(), { GPUCLOUD_MOVE_TO: label });
    const plan = await moving.plan({ check: true });
    expect(oneLine(plan.stdout)).toContain(`GPUCLOUD_MOVE_TO moves the stack's API tokens of account GPUCLOUD_* to ${label}`);
    await moving.apply({ check: true, planFile: plan.planFile });
    for (const name of ["fr-mv-a", "fr-mv-b"]) {
      expect(named(fx.emulator, name)).toHaveLength(1);
      expect(named(prodApi, name)).toHaveLength(1);
    }
    // The next job, without the variable: the stack is on staging now.
    await expectSteadyPlan(await job(db, tokens("fr-mv-a", "fr-mv-b"), staging()));
  });

  test("credentials rotated and the managed token revoked: the plan says what is known, not 'another account'", async () => {
    const db = await pg.createDatabase("rotated");
    const client = fx.client(STAGING);
    const [first, second] = [await client.createToken({ name: "fr-cred-1" }), await client.createToken({ name: "fr-cred-2" })];
    await client.close();
    const viaToken = (value: string) => ({ GPUCLOUD_API_TOKEN: value });
    await (await job(db, tokens("fr-rot"), staging(), viaToken(first.token))).apply({ check: true });
    const [managed] = named(fx.emulator, "fr-rot");
    fx.emulator.deleteToken(managed.id);
    fx.emulator.deleteToken(first.id);

    const plan = await (await job(db, tokens("fr-rot"), staging(), viaToken(second.token))).plan();
    expect(plan.exitCode).toBe(1);
    const said = oneLine(plan.stderr);
    expect(said).toContain(
      `these credentials list none of them: "fr-rot" (id ${managed.id}). They reach another account, or those tokens were revoked.`,
    );
    expect(said).toMatch(/GPUCLOUD_MOVE_TO="API token sha256:[0-9a-f]{12} at /);
    expect(plan.stderr + plan.stdout).not.toContain(second.token);
  });

  test("another address of the same account lists the token: no resource changes", async () => {
    const db = await pg.createDatabase("address");
    await (await job(db, tokens("fr-addr"), staging())).apply({ check: true });
    const [token] = named(fx.emulator, "fr-addr");
    const otherAddress = fx.emulator.url.replace("127.0.0.1", "localhost");
    const later = await job(db, tokens("fr-addr"), staging(), { GPUCLOUD_BASE_URL: otherAddress });
    const plan = await later.plan({ check: true });
    expect(plan.plan?.resource_changes?.filter((c) => !c.change.actions.includes("no-op")) ?? []).toEqual([]);
    expect((await later.output())["fr-addr_id"].value).toBe(token.id);
    expect(named(fx.emulator, "fr-addr")).toHaveLength(1);
  });

  test("a rename and then a removal across fresh jobs: the same token renamed; the removal warned in the plan with its id and account", async () => {
    const db = await pg.createDatabase("lifecycle");
    await (await job(db, tokens("fr-keep", "fr-old"), staging())).apply({ check: true });
    const [renamed] = named(fx.emulator, "fr-old");
    const renaming = (stack: TerraformStack) => {
      new ApiToken(stack, "fr-keep", { name: "fr-keep" });
      new ApiToken(stack, "fr-old", { name: "fr-new", previousNames: ["fr-old"] });
    };
    const renamedLog = oneLine((await (await job(db, renaming, staging())).apply({ check: true })).stdout);
    expect(renamedLog).toContain(`API token "fr-old" (id ${renamed.id}) for s/fr-old: renamed "fr-old" to "fr-new"`);
    expect(named(fx.emulator, "fr-new")).toEqual([expect.objectContaining({ id: renamed.id })]);

    const removing = await job(db, (stack) => new ApiToken(stack, "fr-keep", { name: "fr-keep" }), staging());
    const plan = await removing.plan({ check: true });
    expect(oneLine(plan.stdout)).toContain(
      `API token "fr-new" (id ${renamed.id}) on user ${STAGING.username} at ${address(fx.emulator)} (account GPUCLOUD_*) stays ACTIVE: ` +
        `the ApiToken "s/fr-old" is no longer in the stack`,
    );
    await removing.apply({ check: true, planFile: plan.planFile });
    // Said once: the next job's plan has nothing to say.
    const next = await job(db, (stack) => new ApiToken(stack, "fr-keep", { name: "fr-keep" }), staging());
    await expectSteadyPlan(next);
    expect(named(fx.emulator, "fr-new")).toEqual([expect.objectContaining({ id: renamed.id })]);
  });

  test("a rename without previousNames under a create_before_destroy consumer, across fresh jobs: the same token, from the ledger", async () => {
    const db = await pg.createDatabase("ledgerrename");
    const withConsumer = (name: string) => (stack: TerraformStack) => {
      const token = new ApiToken(stack, "fr-cbd", { name });
      const consumer = new TerraformResource(stack, "consumer", {
        terraformResourceType: "null_resource",
        terraformGeneratorMetadata: { providerName: "null" },
        lifecycle: { createBeforeDestroy: true },
      });
      consumer.addOverride("triggers", { token_id: token.tokenId });
    };
    await (await job(db, withConsumer("fr-cbd-old"), staging())).apply({ check: true });
    const [old] = named(fx.emulator, "fr-cbd-old");
    const renaming = await job(db, withConsumer("fr-cbd-new"), staging());
    const applied = oneLine((await renaming.apply({ check: true })).stdout);
    // The plan-time read found the ledger's token for the path; the writer renamed that id.
    expect(applied).toContain(`API token "fr-cbd-old" (id ${old.id}) for s/fr-cbd: renamed "fr-cbd-old" to "fr-cbd-new"`);
    expect(named(fx.emulator, "fr-cbd-new")).toEqual([expect.objectContaining({ id: old.id, token: old.token })]);
    expect(named(fx.emulator, "fr-cbd-old")).toEqual([]);
    await expectSteadyPlan(await job(db, withConsumer("fr-cbd-new"), staging()));
  });

  test("two workspaces on two accounts, one database: each its own token; staging's variables in prod's workspace fail the plan", async () => {
    const db = await pg.createDatabase("workspaces");
    const inWorkspace = async (ws: string, vars: { api: RunningEmulator; user: TestAccount }) => {
      const tf = await job(db, tokens("fr-ws"), vars, { TF_WORKSPACE: ws });
      return tf;
    };
    const first = await job(db, tokens("fr-ws"), staging());
    for (const ws of ["staging", "prod"]) first.newWorkspace(ws);
    await (await inWorkspace("staging", staging())).apply({ check: true });
    await (await inWorkspace("prod", prod())).apply({ check: true });
    expect(named(fx.emulator, "fr-ws")).toHaveLength(1);
    expect(named(prodApi, "fr-ws")).toHaveLength(1);
    const crossed = await (await inWorkspace("prod", staging())).plan();
    expect(crossed.exitCode).toBe(1);
    expect(oneLine(crossed.stderr)).toContain(`(workspace "prod") managed its API tokens as user ${PROD.username} at ${address(prodApi)}`);
  });

  test("where the state cannot be read (no terraform binary to run), a pin decides: another identity or address fails, the pinned deployment plans", async () => {
    const db = await pg.createDatabase("pinned");
    const pinned = (allowed: string) => (stack: TerraformStack) => {
      const account = new GpuCloudAccount(stack, "account", { allowedIdentities: [allowed] });
      new ApiToken(stack, "fr-pin", { name: "fr-pin", account });
    };
    const noBinary = { GPUCLOUD_TERRAFORM: "/nonexistent/terraform" };
    const unpinned = await (await job(db, tokens("fr-pin"), staging(), noBinary)).plan();
    expect(unpinned.exitCode).toBe(1);
    expect(oneLine(unpinned.stderr)).toContain(
      'could not be read from its state (GPUCLOUD_TERRAFORM names "/nonexistent/terraform", which cannot be found), so this plan cannot tell',
    );

    const wrongPin = await job(db, pinned(`user ${PROD.username} at ${address(prodApi)}`), staging(), noBinary);
    const refused = await wrongPin.plan();
    expect(refused.exitCode).toBe(1);
    expect(oneLine(refused.stderr)).toContain(
      `the credentials of account GPUCLOUD_* log in as user ${STAGING.username} at ${address(fx.emulator)}, which its GpuCloudAccount ` +
        `does not allow (allowedIdentities: user ${PROD.username} at ${address(prodApi)}).`,
    );
    // The same user name pinned at another address (staging's name on prod's API): a deployment, not a user, is pinned.
    const otherAddress = await job(db, pinned(`user ${STAGING.username} at ${address(prodApi)}`), staging(), noBinary);
    expect((await otherAddress.plan()).exitCode).toBe(1);
    const rightPin = await job(db, pinned(`user ${STAGING.username} at ${address(fx.emulator)}/`), staging(), noBinary);
    const plan = await rightPin.plan({ check: true });
    expect(oneLine(plan.stdout)).not.toContain("could not be read from its state");
  });
});
