/**
 * What a plan says when the credentials or the workspace change under a stack, under real
 * Terraform (offline, through the provider doubles) against the emulator: credentials that reach
 * another account fail the plan, naming both sides and the one variable that moves on purpose; the
 * same account through another credential changes no resource; a second workspace of one folder
 * on the same account adopts the first one's token, whose id its plan shows. docs/accounts.md
 * ("Workspaces", "Changing credentials").
 */
import { TerraformOutput } from "cdktf";

import { ApiToken } from "../../src";
import type { TestAccount } from "../support/api-credentials";
import { describeWithTerraform, oneLine, outputChanges } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const ALICE = { username: "wc-alice", password: "wc-alice-pw-17", account: "staging" };
const BOB = { username: "wc-bob", password: "wc-bob-pw-29", account: "prod" };

describeWithTerraform("workspaces and credentials under real Terraform: a change of account is never silent", () => {
  const fx = terraformFixture({ users: [ALICE, BOB] });
  const tokensOf = fx.tokensOf;
  const stackDir = (name: string) =>
    fx.folder({ prefix: "gpucloud-wc-" }).synth((stack) => {
      const token = new ApiToken(stack, "ci", { name });
      new TerraformOutput(stack, "token_id", { value: token.tokenId });
    }).dir;
  const runner = (dir: string, env: NodeJS.ProcessEnv) => fx.runner(dir, { env, timeoutMs: 120_000 });
  const as = (account: TestAccount, over: NodeJS.ProcessEnv = {}) => fx.env(over, account);

  test("credentials of another account fail the plan, naming both sides; one variable moves the stack on purpose", async () => {
    const dir = stackDir("wc-serving");
    const tf = runner(dir, as(ALICE));
    await tf.init({ check: true });
    await tf.apply({ check: true });
    const [ours] = tokensOf("staging", "wc-serving");
    const api = fx.emulator.url.replace(/\/+$/, "");

    // The pipeline's variables now hold another account's credentials: the plan stops, nothing is created there.
    const wrong = runner(dir, as(BOB));
    const plan = await wrong.plan();
    expect(plan.exitCode).toBe(1);
    const said = oneLine(plan.stderr);
    expect(said).toContain(
      `the credentials of account GPUCLOUD_* log in as user wc-bob at ${api}, but the last apply of this stack ` +
        `(workspace "default") managed its API tokens as user wc-alice at ${api}, and these credentials list none of them: ` +
        `"wc-serving" (id ${ours.id}). They reach another account, or those tokens were revoked. Nothing was planned.`,
    );
    expect(said).toContain(
      "set GPUCLOUD_API_TOKEN (or GPUCLOUD_USERNAME with its password), and GPUCLOUD_BASE_URL or the account's baseUrl",
    );
    expect(said).toContain(`ApiToken "s/ci"`);
    for (const secret of [ALICE.password, BOB.password]) expect(plan.stderr + plan.stdout).not.toContain(secret);
    expect(tokensOf("prod", "wc-serving")).toEqual([]);

    // Moving on purpose: the one variable the message names; the apply creates the token on the other account.
    const move = `GPUCLOUD_MOVE_TO="user wc-bob at ${api}"`;
    expect(said).toContain(move);
    const moving = runner(dir, as(BOB, { GPUCLOUD_MOVE_TO: `user wc-bob at ${api}` }));
    await moving.apply({ check: true });
    expect(tokensOf("prod", "wc-serving")).toHaveLength(1);
    expect(tokensOf("staging", "wc-serving")).toEqual([expect.objectContaining({ id: ours.id })]);
    // From then on the stack is on Bob's account, without the variable.
    expect((await wrong.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("the same account through another credential (a password, then an API token): the plan has no change at all (exit 0)", async () => {
    const dir = stackDir("wc-same-account");
    const tf = runner(dir, as(ALICE));
    await tf.init({ check: true });
    await tf.apply({ check: true });
    const client = fx.client(ALICE);
    const pipelineToken = await client.createToken({ name: "wc-pipeline-credential" });
    await client.close();
    const { GPUCLOUD_USERNAME: _u, GPUCLOUD_PASSWORD: _p, ...withoutPassword } = as(ALICE);
    const viaToken = runner(dir, { ...withoutPassword, GPUCLOUD_API_TOKEN: pipelineToken.token });
    const plan = await viaToken.plan({ detailedExitCode: true });
    expect(plan.stderr).toBe("");
    // The credentials list the tokens the ledger holds: the ledger keeps the account as recorded, nothing changes.
    expect(plan.exitCode).toBe(0);
    expect(plan.stdout).toContain("No changes.");
    expect(plan.stdout).not.toContain(pipelineToken.token);
    // Back to the password: still nothing.
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a saved plan applied with another account's credentials: the apply refuses before it writes", async () => {
    const dir = stackDir("wc-saved");
    const tf = runner(dir, as(ALICE));
    await tf.init({ check: true });
    // Alice's plan creates the token; the apply job has Bob's variables.
    const plan = await tf.plan({ check: true });
    const applied = await runner(dir, as(BOB)).apply({ planFile: plan.planFile });
    expect(applied.exitCode).not.toBe(0);
    const said = oneLine(applied.stderr + applied.stdout);
    expect(said).toContain(
      `this apply's credentials of account GPUCLOUD_* log in as user wc-bob at ${fx.emulator.url.replace(/\/+$/, "")}, ` +
        "not as the credentials the plan it applies was made with",
    );
    expect(tokensOf("prod", "wc-saved")).toEqual([]);
    expect(tokensOf("staging", "wc-saved")).toEqual([]);
  });

  test("a second workspace of one folder on the same account, the same name: one token, its id shown at plan; both workspaces steady", async () => {
    const dir = stackDir("wc-shared");
    const plain = runner(dir, as(ALICE));
    await plain.init({ check: true });
    for (const ws of ["staging", "prod"]) plain.newWorkspace(ws);
    const staging = runner(dir, as(ALICE, { TF_WORKSPACE: "staging" }));
    await staging.apply({ check: true });
    const [token] = tokensOf("staging", "wc-shared");

    // Prod's plan finds staging's token by its name: the reviewer sees that id before anything is written.
    const prod = runner(dir, as(ALICE, { TF_WORKSPACE: "prod" }));
    const plan = await prod.plan({ check: true });
    expect(outputChanges(plan.plan!).token_id.after).toBe(token.id);
    const applied = await prod.apply({ check: true, planFile: plan.planFile });
    expect(applied.stdout).not.toContain("created API token");
    // Adopted, not duplicated: one token, two workspaces, each steady (docs/accounts.md: give each workspace its own name).
    expect(tokensOf("staging", "wc-shared")).toEqual([expect.objectContaining({ id: token.id, token: token.token })]);
    expect((await prod.output()).token_id.value).toBe(token.id);
    for (const tf of [staging, prod]) expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });
});
