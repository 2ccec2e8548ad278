/**
 * Run state that belongs to one run, under real Terraform (offline, through the provider doubles)
 * against the emulator: the files a run's scripts share (the walk of the token list, the login)
 * are never taken by another run, even one whose plan falls in the same second (plantimestamp()
 * counts seconds): not another workspace on another account applying beside it, not a retry of a
 * failed run. The workspaces case plans again until the two plans' plantimestamp() are equal, so that
 * the second is shared for real; each case asserts the API's state. docs/token-lifecycle.md ("Run
 * state") names them.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput } from "cdktf";

import { ApiToken } from "../../src";
import type { TestAccount } from "../support/api-credentials";
import { lapseLeases, runFoldersIn } from "../support/run-folders";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform, handoffFiles, oneLine, outputChanges, type PlanResult, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const STAGING = { username: "rs-staging-bot", password: "rs-staging-pw-41d2", account: "staging" };
const PROD = { username: "rs-prod-bot", password: "rs-prod-pw-9e07", account: "prod" };
// The API answers this user's login with another spelling of the name.
const SPELLED = { username: "RS-Acme-Bot", password: "rs-acme-pw-0c3b", account: "acme", answersAs: "rs-acme-bot" };
/** Attempts at putting two plans in one second. */
const PLAN_ATTEMPTS = 20;

/** Waits until just after the start of a second: two plans started then most likely fall within it. */
async function atSecondStart(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
}

describeWithTerraform("run state under real Terraform: one run's files are its own", () => {
  const fx = terraformFixture({ users: [STAGING, PROD, SPELLED] });
  const tokensOf = fx.tokensOf;

  /** One stack folder: an ApiToken, its id and the plan's timestamp as outputs. */
  const synth = (folder: SynthFolder, name: string) =>
    folder.synth((stack) => {
      const token = new ApiToken(stack, "ci", { name });
      new TerraformOutput(stack, "token_id", { value: token.tokenId });
      new TerraformOutput(stack, "plan_time", { value: "${plantimestamp()}" });
    }).dir;
  const runner = (dir: string, account: TestAccount, over: NodeJS.ProcessEnv = {}) =>
    fx.runner(dir, { env: fx.env(over, account), timeoutMs: 120_000 });
  const outputs = async (tf: TerraformRunner) => {
    const out = await tf.output();
    return { tokenId: out.token_id.value as string, planTime: out.plan_time.value as string };
  };

  test("two workspaces of one folder on two accounts, their plans in the same second, applied at once: each account gets its own token", async () => {
    const name = "rs-ws";
    const dir = synth(fx.folder({ prefix: "gpucloud-run-state-ws-" }), name);
    // TF_WORKSPACE selects each job's workspace, as a pipeline sets it; both share the folder and its .terraform.
    const staging = runner(dir, STAGING, { TF_WORKSPACE: "staging" });
    const prod = runner(dir, PROD, { TF_WORKSPACE: "prod" });
    const plain = runner(dir, STAGING);
    await plain.init({ check: true });
    for (const ws of ["staging", "prod"]) plain.newWorkspace(ws);
    // Saved plans, as a pipeline that reviews its plans: planned again until both fall in one second
    // (plantimestamp() equal). A plan writes nothing, so an attempt costs a second or two even on a
    // loaded machine, and the applies then share that second whenever they run.
    const planTime = (p: PlanResult) => outputChanges(p.plan!).plan_time.after as string;
    let plans: PlanResult[] = [];
    for (let attempt = 1; attempt <= PLAN_ATTEMPTS && plans.length === 0; attempt++) {
      await atSecondStart();
      const pair = await Promise.all(
        [staging, prod].map((tf, i) => tf.plan({ check: true, out: path.join(dir, ".terraform", `ws-${i}.tfplan`) })),
      );
      if (planTime(pair[0]) === planTime(pair[1])) plans = pair;
    }
    expect(plans).toHaveLength(2);
    const [a, b] = await Promise.all([staging.apply({ planFile: plans[0].planFile }), prod.apply({ planFile: plans[1].planFile })]);
    expect(a.stderr).toBe("");
    expect(b.stderr).toBe("");
    expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
    const [onStaging, onProd] = [await outputs(staging), await outputs(prod)];
    expect(onStaging.planTime).toBe(onProd.planTime);
    // One token of the name on each account, each workspace's tokenId its own account's.
    expect(tokensOf("staging", name)).toEqual([expect.objectContaining({ id: onStaging.tokenId })]);
    expect(tokensOf("prod", name)).toEqual([expect.objectContaining({ id: onProd.tokenId })]);
    expect(onStaging.tokenId).not.toBe(onProd.tokenId);
    expect(a.stdout).toContain(`created API token "${name}"`);
    expect(b.stdout).toContain(`created API token "${name}"`);
  });

  // The retry cannot share the failed run's second here: a failing apply alone takes over a second
  // (1.0 to 2.1 s measured on this machine), so the retry's plan starts in a later one. The same
  // plantimestamp() with another nonce is pinned at the script level (test/runtime/run-walk.test.ts).
  test("a rename that failed (the name was taken), fixed in the console and retried at once: the same token is renamed", async () => {
    const folder = fx.folder({ prefix: "gpucloud-run-state-retry-" });
    const tf = runner(synth(folder, "rs-old"), STAGING);
    await tf.init({ check: true });
    await tf.apply({ check: true });
    const [ours] = tokensOf("staging", "rs-old");
    // Someone else's token already has the new name.
    const client = fx.client(STAGING);
    const theirs = await client.createToken({ name: "rs-new" });

    synth(folder, "rs-new");
    const failed = await tf.apply();
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stderr + failed.stdout).toContain(`API token ${theirs.id} already has that name`);
    // Fixed in the console at once, and retried at once, as a retry loop does.
    await client.updateToken(theirs.id, { name: "rs-new-theirs" });
    await client.close();
    expect(claimedBy(tf.dir)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const retried = await tf.apply();
    expect(retried.stderr).toBe("");
    expect(retried.exitCode).toBe(0);
    expect(retried.stdout).toContain('finishing the rename of API token "rs-old" to "rs-new"');
    // The same token renamed, theirs left alone, and the state's tokenId is ours.
    expect(tokensOf("staging", "rs-new")).toEqual([expect.objectContaining({ id: ours.id, token: ours.token })]);
    expect(tokensOf("staging", "rs-new-theirs")).toEqual([expect.objectContaining({ id: theirs.id })]);
    expect((await outputs(tf)).tokenId).toBe(ours.id);
  });

  test("a login the API answers with another spelling of the username: one login for all the apply's scripts", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `rs-spelled-${i}`);
    const dir = fx
      .folder({ prefix: "gpucloud-run-state-spelled-" })
      .synth((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name }))).dir;
    const tf = runner(dir, SPELLED);
    await tf.init({ check: true });
    fx.emulator.resetStats();
    const applied = await tf.apply({ check: true });
    expect(applied.stdout).toContain("logged in as rs-acme-bot");
    // The plan's read, then one login for the twelve create halves and the read after the writes.
    expect(fx.emulator.stats().logins).toBe(2);
    for (const name of names) expect(tokensOf("acme", name)).toHaveLength(1);
  });

  test("a plan of the same folder and workspace with -lock=false while an apply renames: the apply renames the same token", async () => {
    const folder = fx.folder({ prefix: "gpucloud-run-state-nolock-" });
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-run-state-nolock-tmp-"));
    const tf = runner(synth(folder, "rs-nolock-a"), STAGING, { TMPDIR: tmp });
    await tf.init({ check: true });
    await tf.apply({ check: true });
    const [ours] = tokensOf("staging", "rs-nolock-a");
    // The apply's create halves wait at a gate (a `node` on PATH that waits, as a slow runner would),
    // after the destroy half handed the token off; a plan runs meanwhile, without the state lock.
    const gate = path.join(tmp, "open");
    const bin = mkdtempSync(path.join(tmpdir(), "gpucloud-gated-node-"));
    writeFileSync(
      path.join(bin, "node"),
      `#!/bin/sh\ncase "$*" in *token-apply*) while [ ! -e "${gate}" ]; do sleep 0.05; done;; esac\nexec "${process.execPath}" "$@"\n`,
    );
    chmodSync(path.join(bin, "node"), 0o755);
    const gated = runner(synth(folder, "rs-nolock-b"), STAGING, { TMPDIR: tmp, PATH: `${bin}:${process.env.PATH}` });
    const apply = (await gated.start("apply", ["-auto-approve"])).result;
    for (let i = 0; handoffFiles(tf.dir).length === 0; i++) {
      if (i > 1200) throw new Error(`no hand-off after 60 s: ${JSON.stringify(await Promise.race([apply, Promise.resolve("running")]))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const plan = await tf.plan({ args: ["-lock=false"] });
    writeFileSync(gate, "");
    const applied = await apply;
    expect(plan.exitCode).toBe(0);
    expect(applied.stderr).toBe("");
    expect(applied.exitCode).toBe(0);
    expect(applied.stdout).toContain(`API token id ${ours.id}: renamed "rs-nolock-a" to "rs-nolock-b"`);
    expect(applied.stdout).not.toContain("was released by an earlier terraform run");
    expect(tokensOf("staging", "rs-nolock-b")).toEqual([expect.objectContaining({ id: ours.id })]);
    expect(tokensOf("staging", "rs-nolock-a")).toEqual([]);
  });

  test("a plan whose spent run folders cannot be removed succeeds, and its check block says which", async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-run-state-sweep-tmp-"));
    const env = { TMPDIR: tmp };
    const tf = runner(synth(fx.folder({ prefix: "gpucloud-run-state-sweep-" }), "rs-sweep"), STAGING, env);
    await tf.init({ check: true });
    await tf.apply({ check: true });
    // A lapsed run folder that cannot be removed: a folder inside it (the sweep removes files only; for
    // root too, as a file of another owner or on a read-only mount is for anyone else).
    const [folder] = runFoldersIn(tmp);
    mkdirSync(path.join(folder, "stuck", "inside"), { recursive: true });
    lapseLeases(tmp);
    // (Not -detailed-exitcode: the plan_time output changes at every plan.)
    const plan = await tf.plan();
    expect(plan.stderr).toBe("");
    expect(plan.exitCode).toBe(0);
    expect(plan.plan?.resource_changes?.filter((c) => !c.change.actions.includes("no-op")) ?? []).toEqual([]);
    expect(oneLine(plan.stdout)).toMatch(/could not remove a spent run folder \(.*gpucloud-\d+\/[0-9a-f]+: .*\); going on/);
  });

  /** The plan time of the failed run, from the hand-off its create half claimed before it failed. */
  function claimedBy(stackDir: string): string {
    const [file] = handoffFiles(stackDir);
    expect(file).toBeDefined();
    const handoff = JSON.parse(readFileSync(path.join(stackDir, ".gpucloud-handoff", file), "utf8")) as { claimedBy?: string };
    expect(handoff.claimedBy).toEqual(expect.any(String));
    return handoff.claimedBy!;
  }
});
