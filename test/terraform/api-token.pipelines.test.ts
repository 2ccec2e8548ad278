/**
 * ApiToken where pipelines really start Terraform (issue 21): terraform as pid 1 of a container
 * without an init, `node` on PATH as a version manager's shim that starts the real node as its
 * child, a non-English locale. Create, a rename through the hand-off, a rename with
 * previousNames and a steady plan behave as on a developer's laptop: the run that both halves of
 * a replacement belong to is Terraform's `plantimestamp()`, not anything read from the process
 * table. Each case asserts Terraform's output and the API's state.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput, TerraformResource, type TerraformStack } from "cdktf";

import { ApiToken, type ApiTokenProps } from "../../src";
import { expectSteadyPlan } from "../support/steady-plan";
import { describeWithTerraform, handoffFiles, oneLine, pid1Available, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "pipeline-bot", password: "pipeline-password-77e2" };

/** A folder with a `node` that runs the real node as its child (no exec) and counts its calls. */
function nodeShim(): { dir: string; calls: () => number } {
  const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-node-shim-"));
  const log = path.join(dir, "calls");
  writeFileSync(path.join(dir, "node"), `#!/bin/sh\necho call >> "${log}"\n"${process.execPath}" "$@"\n`);
  chmodSync(path.join(dir, "node"), 0o755);
  return { dir, calls: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0) };
}

describeWithTerraform("ApiToken where pipelines run terraform: pid 1, a node shim, any locale", () => {
  const fx = terraformFixture({ users: [USER] });
  const pid1 = pid1Available();
  const shim = nodeShim();

  class Project {
    readonly folder = fx.folder({ prefix: "gpucloud-pipelines-", stackId: "tokens" });
    readonly dir = this.folder.dir;
    tf!: TerraformRunner;

    synth(props: ApiTokenProps): this {
      this.folder.synth((stack) => this.build(stack, props));
      return this;
    }

    private build(stack: TerraformStack, props: ApiTokenProps): void {
      const token = new ApiToken(stack, "ci", props);
      new TerraformOutput(stack, "token_id", { value: token.tokenId });
      // Says which process started the provisioners' shell: 1 when terraform is pid 1.
      const probe = new TerraformResource(stack, "parent-probe", {
        terraformResourceType: "null_resource",
        terraformGeneratorMetadata: { providerName: "null" },
      });
      probe.addOverride("triggers", { name: props.name });
      probe.addOverride("provisioner", [{ "local-exec": { command: 'echo "shell-parent=$PPID"' } }]);
    }

    async init(opts: { asPid1: boolean; env: NodeJS.ProcessEnv }): Promise<TerraformRunner> {
      this.tf = await fx.init(this.dir, { env: fx.env(opts.env), asPid1: opts.asPid1, timeoutMs: 120_000 });
      return this.tf;
    }

    handoffs(): string[] {
      return handoffFiles(this.dir);
    }
  }

  const named = fx.named;

  const cases: ReadonlyArray<readonly [string, string, { asPid1: boolean; shim: boolean; env: NodeJS.ProcessEnv }]> = [
    ["terraform as pid 1 (a container without an init)", "pid1", { asPid1: true, shim: false, env: {} }],
    [
      "node on PATH is a shim that starts the real node as its child, in a German locale",
      "shim",
      { asPid1: false, shim: true, env: { PATH: `${shim.dir}:${process.env.PATH ?? ""}`, LANG: "de_DE.UTF-8", LC_ALL: "de_DE.UTF-8" } },
    ],
  ];

  test.each(cases)("%s: create, rename without and with previousNames, steady plan", async (_what, tag, how) => {
    if (how.asPid1 && !pid1.ok) {
      console.warn(`Skipping the pid-1 case: ${pid1.reason}`);
      return;
    }
    const callsBefore = shim.calls();
    const p = new Project().synth({ name: `${tag}-a`, description: "v1" });
    const tf = await p.init(how);

    const created = oneLine((await tf.apply({ check: true })).stdout);
    const [token] = named(`${tag}-a`);
    expect(created).toContain(`created API token "${tag}-a" (id ${token.id})`);
    if (how.asPid1) expect(created).toMatch(/shell-parent=1(?!\d)/);
    else expect(created).not.toMatch(/shell-parent=1(?!\d)/);
    const count = fx.emulator.tokens().length;

    // A rename without previousNames: the destroy half hands the token to the create half of this run.
    p.synth({ name: `${tag}-b`, description: "v1" });
    const renamed = oneLine((await tf.apply({ check: true })).stdout);
    expect(renamed).toContain(`API token id ${token.id}: renamed "${tag}-a" to "${tag}-b"`);
    expect(renamed).not.toContain("released by an earlier terraform run");
    expect(named(`${tag}-b`)).toEqual([expect.objectContaining({ id: token.id, token: token.token })]);
    expect(p.handoffs()).toEqual([]);

    // A rename with previousNames, and a description change with it.
    p.synth({ name: `${tag}-c`, description: "v2", previousNames: [`${tag}-b`] });
    await tf.apply({ check: true });
    expect(named(`${tag}-c`)).toEqual([expect.objectContaining({ id: token.id, description: "v2" })]);
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect((await tf.output()).token_id.value).toBe(token.id);

    await expectSteadyPlan(tf);
    // The shim was what ran the scripts (provisioners and the stack's read), not a node found otherwise.
    if (how.shim) expect(shim.calls() - callsBefore).toBeGreaterThanOrEqual(6);
  });

  test("a saved plan applied seconds later: both halves of its rename share the plan's run; the same token", async () => {
    const p = new Project().synth({ name: "saved-a" });
    const tf = await p.init({ asPid1: false, env: {} });
    await tf.apply({ check: true });
    const [token] = named("saved-a");

    p.synth({ name: "saved-b" });
    const plan = await tf.plan({ check: true });
    await new Promise((r) => setTimeout(r, 1_500));
    const applied = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    expect(applied).toContain(`API token id ${token.id}: renamed "saved-a" to "saved-b"`);
    expect(named("saved-b")).toEqual([expect.objectContaining({ id: token.id })]);
  });

  test("destroy, then at once a deploy under another name: a hand-off released before the plan is another run's, so a new token, said so", async () => {
    const p = new Project().synth({ name: "fast-a" });
    const tf = await p.init({ asPid1: false, env: {} });
    await tf.apply({ check: true });
    const [old] = named("fast-a");
    await tf.destroy({ check: true });
    const [file] = p.handoffs();
    const handoffPath = path.join(p.dir, ".gpucloud-handoff", file);
    // The destroy's plan time is the run's plan timestamp (RFC 3339, to the second).
    const released = readFileSync(handoffPath, "utf8");
    expect(JSON.parse(released)).toMatchObject({
      id: old.id,
      name: "fast-a",
      planTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });

    // The plan's read runs before any write of its run and says when in its ticket: a hand-off released
    // before it is an earlier run's, also one of the same second (runs on this emulator take well under one).
    // The read itself writes nothing: a plan beside an apply (no state lock) cannot undo the apply's hand-off.
    p.synth({ name: "fast-b" });
    const plan = await tf.plan({ check: true });
    expect(readFileSync(handoffPath, "utf8")).toBe(released);
    const applied = oneLine((await tf.apply({ check: true, planFile: plan.planFile })).stdout);
    expect(applied).toMatch(new RegExp(`WARNING: API token "fast-a" \\(id ${old.id}\\) was released by an earlier terraform run`));
    expect(named("fast-a")).toEqual([expect.objectContaining({ id: old.id })]);
    expect(named("fast-b")).toHaveLength(1);
    expect(named("fast-b")[0].id).not.toBe(old.id);
  });
});
