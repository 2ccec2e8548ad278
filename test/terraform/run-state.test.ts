/**
 * Runs that meet under real Terraform (offline, through the provider doubles) against the
 * emulator. Each apply's writes are made by one writer process per stack and account, from what
 * its plan decided and the state holds (issue 41): no file is shared between runs, so nothing one
 * run does can be taken by another: not two workspaces of one folder on two accounts applying at
 * once, not a retry of a failed run, not a plan without the state lock beside an apply. Each case
 * asserts the API's state.
 */
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput } from "cdktf";

import { ApiToken } from "../../src";
import type { TestAccount } from "../support/api-credentials";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform, oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const STAGING = { username: "rs-staging-bot", password: "rs-staging-pw-41d2", account: "staging" };
const PROD = { username: "rs-prod-bot", password: "rs-prod-pw-9e07", account: "prod" };
// The API answers this user's login with another spelling of the name.
const SPELLED = { username: "RS-Acme-Bot", password: "rs-acme-pw-0c3b", account: "acme", answersAs: "rs-acme-bot" };

describeWithTerraform("runs that meet under real Terraform: each apply's writes are its own", () => {
  const fx = terraformFixture({ users: [STAGING, PROD, SPELLED] });
  const tokensOf = fx.tokensOf;

  /** One stack folder: an ApiToken and its id as an output. */
  const synth = (folder: SynthFolder, name: string) =>
    folder.synth((stack) => {
      const token = new ApiToken(stack, "ci", { name });
      new TerraformOutput(stack, "token_id", { value: token.tokenId });
    }).dir;
  const runner = (dir: string, account: TestAccount, over: NodeJS.ProcessEnv = {}) =>
    fx.runner(dir, { env: fx.env(over, account), timeoutMs: 120_000 });
  const tokenId = async (tf: TerraformRunner) => (await tf.output()).token_id.value as string;

  test("two workspaces of one folder on two accounts, planned and applied at once: each account gets its own token", async () => {
    const name = "rs-ws";
    const dir = synth(fx.folder({ prefix: "gpucloud-run-state-ws-" }), name);
    // TF_WORKSPACE selects each job's workspace, as a pipeline sets it; both share the folder and its .terraform.
    const staging = runner(dir, STAGING, { TF_WORKSPACE: "staging" });
    const prod = runner(dir, PROD, { TF_WORKSPACE: "prod" });
    const plain = runner(dir, STAGING);
    await plain.init({ check: true });
    for (const ws of ["staging", "prod"]) plain.newWorkspace(ws);
    // Saved plans, as a pipeline that reviews its plans, made at once and applied at once.
    const plans = await Promise.all(
      [staging, prod].map((tf, i) => tf.plan({ check: true, out: path.join(dir, ".terraform", `ws-${i}.tfplan`) })),
    );
    const [a, b] = await Promise.all([staging.apply({ planFile: plans[0].planFile }), prod.apply({ planFile: plans[1].planFile })]);
    expect(a.stderr).toBe("");
    expect(b.stderr).toBe("");
    expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
    const [onStaging, onProd] = [await tokenId(staging), await tokenId(prod)];
    // One token of the name on each account, each workspace's tokenId its own account's.
    expect(tokensOf("staging", name)).toEqual([expect.objectContaining({ id: onStaging })]);
    expect(tokensOf("prod", name)).toEqual([expect.objectContaining({ id: onProd })]);
    expect(onStaging).not.toBe(onProd);
    expect(oneLine(a.stdout)).toContain(`created API token "${name}" (id ${onStaging}) for s/ci`);
    expect(oneLine(b.stdout)).toContain(`created API token "${name}" (id ${onProd}) for s/ci`);
    for (const tf of [staging, prod]) expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

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
    expect(oneLine(failed.stderr + failed.stdout)).toContain(`API token ${theirs.id} already has that name`);
    expect(tokensOf("staging", "rs-new")).toEqual([expect.objectContaining({ id: theirs.id })]);
    expect(tokensOf("staging", "rs-old")).toEqual([expect.objectContaining({ id: ours.id })]);
    // Fixed in the console at once, and retried at once, as a retry loop does.
    await client.updateToken(theirs.id, { name: "rs-new-theirs" });
    await client.close();
    const retried = await tf.apply();
    expect(retried.stderr).toBe("");
    expect(retried.exitCode).toBe(0);
    expect(oneLine(retried.stdout)).toContain(`API token "rs-old" (id ${ours.id}) for s/ci: renamed "rs-old" to "rs-new"`);
    // The same token renamed, theirs left alone, and the state's tokenId is ours.
    expect(tokensOf("staging", "rs-new")).toEqual([expect.objectContaining({ id: ours.id, token: ours.token })]);
    expect(tokensOf("staging", "rs-new-theirs")).toEqual([expect.objectContaining({ id: theirs.id })]);
    expect(await tokenId(tf)).toBe(ours.id);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a login the API answers with another spelling of the username: one login per script, three for an apply of 12 tokens", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `rs-spelled-${i}`);
    const dir = fx
      .folder({ prefix: "gpucloud-run-state-spelled-" })
      .synth((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name }))).dir;
    const tf = runner(dir, SPELLED);
    await tf.init({ check: true });
    fx.emulator.resetStats();
    const applied = oneLine((await tf.apply({ check: true })).stdout);
    expect(applied).toContain("logged in as rs-acme-bot");
    expect(applied).toContain("gpucloud: 12 of 12 tokens written");
    // The plan-time read, the writer (all twelve creates) and the read after the writes: one login each.
    expect(fx.emulator.stats().logins).toBe(3);
    for (const name of names) expect(tokensOf("acme", name)).toHaveLength(1);
  });

  test("a plan of the same folder and workspace with -lock=false while an apply renames: the apply renames the same token", async () => {
    const folder = fx.folder({ prefix: "gpucloud-run-state-nolock-" });
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-run-state-nolock-tmp-"));
    const tf = runner(synth(folder, "rs-nolock-a"), STAGING);
    await tf.init({ check: true });
    await tf.apply({ check: true });
    const [ours] = tokensOf("staging", "rs-nolock-a");
    // The apply's writer waits at a gate (a `node` on PATH that waits, as a slow runner would),
    // after the apply's plan; a plan runs meanwhile, without the state lock.
    const gate = path.join(tmp, "open");
    const waiting = path.join(tmp, "waiting");
    const bin = mkdtempSync(path.join(tmpdir(), "gpucloud-gated-node-"));
    writeFileSync(
      path.join(bin, "node"),
      `#!/bin/sh\ncase "$*" in *token-writer*) touch "${waiting}"; while [ ! -e "${gate}" ]; do sleep 0.05; done;; esac\n` +
        `exec "${process.execPath}" "$@"\n`,
    );
    chmodSync(path.join(bin, "node"), 0o755);
    const gated = runner(synth(folder, "rs-nolock-b"), STAGING, { PATH: `${bin}:${process.env.PATH}` });
    const apply = (await gated.start("apply", ["-auto-approve"])).result;
    for (let i = 0; !existsSync(waiting); i++) {
      if (i > 1200)
        throw new Error(`the writer did not start in 60 s: ${JSON.stringify(await Promise.race([apply, Promise.resolve("running")]))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const plan = await tf.plan({ args: ["-lock=false"] });
    writeFileSync(gate, "");
    const applied = await apply;
    expect(plan.stderr).toBe("");
    expect(plan.exitCode).toBe(0);
    expect(applied.stderr).toBe("");
    expect(applied.exitCode).toBe(0);
    expect(oneLine(applied.stdout)).toContain(`API token "rs-nolock-a" (id ${ours.id}) for s/ci: renamed "rs-nolock-a" to "rs-nolock-b"`);
    expect(applied.stdout).not.toContain("created API token");
    expect(tokensOf("staging", "rs-nolock-b")).toEqual([expect.objectContaining({ id: ours.id, token: ours.token })]);
    expect(tokensOf("staging", "rs-nolock-a")).toEqual([]);
  });
});
