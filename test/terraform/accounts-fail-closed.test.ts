/**
 * Where a plan cannot tell which account the last apply managed, it does not go on: on Atlantis
 * (terraform off PATH under a versioned name), behind a wrapper that hangs, and after a first apply
 * with -target (a state without the ledger). Each fails the plan naming GPUCLOUD_TERRAFORM, a pin and
 * GPUCLOUD_UNCHECKED_ACCOUNT, and its apply writes nothing. The state read takes the ledger output
 * alone: a wrapper that records what terraform printed to the script sees no other output. Every job
 * is a fresh folder on Terraform's pg backend, as most pipelines run. docs/accounts.md.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput, type TerraformStack, TerraformVariable } from "cdktf";

import { ApiToken } from "../../src";
import type { RunningEmulator } from "../../src/emulator";
import type { TestAccount } from "../support/api-credentials";
import { type JobVariables, pipelineJob } from "../support/pipeline-job";
import { describeWithTerraformAndPostgres, postgresFixture } from "../support/postgres";
import { expectSteadyPlan } from "../support/steady-plan";
import { oneLine, terraformBinary } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const STAGING = { username: "fc-staging-bot", password: "fc-staging-pw-51d0" };
const PROD = { username: "fc-prod-bot", password: "fc-prod-pw-9b27" };
const OTHER_SECRET = "fc-other-output-secret-7e3a90";

/** The absolute path of a command as PATH finds it. */
function resolveOnPath(command: string): string {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir !== "" && existsSync(candidate)) return candidate;
  }
  throw new Error(`${command} is not on PATH`);
}

describeWithTerraformAndPostgres("a plan that cannot tell the account fails closed", () => {
  const fx = terraformFixture({ users: [STAGING] });
  const pg = postgresFixture();
  let prodApi: RunningEmulator;
  let realTerraform: string;
  beforeAll(async () => {
    prodApi = await fx.startEmulator({ users: [PROD] });
    realTerraform = path.isAbsolute(terraformBinary()) ? terraformBinary() : resolveOnPath(terraformBinary());
  });
  const address = (api: RunningEmulator) => api.url.replace(/\/+$/, "");
  const staging = () => ({ api: fx.emulator, user: STAGING as TestAccount });
  const prod = () => ({ api: prodApi, user: PROD as TestAccount });
  const label = (vars: { api: RunningEmulator; user: TestAccount }) => `user ${vars.user.username} at ${address(vars.api)}`;

  const job = (connStr: string, build: (stack: TerraformStack) => void, vars: JobVariables, over: NodeJS.ProcessEnv = {}) =>
    pipelineJob(fx, connStr, build, vars, over);
  const token = (stack: TerraformStack) => {
    const t = new ApiToken(stack, "fc", { name: "fc-ci" });
    new TerraformOutput(stack, "fc_id", { value: t.tokenId });
    new TerraformOutput(stack, "fc_value", { value: t.token, sensitive: true });
    new TerraformOutput(stack, "other_secret", { value: OTHER_SECRET, sensitive: true });
  };
  const named = (api: RunningEmulator, name: string) => api.tokens().filter((t) => t.name === name);
  const expectRefusedNamingTheWaysOn = (stderr: string, reason: string, fix: string, vars: { api: RunningEmulator; user: TestAccount }) => {
    const said = oneLine(stderr);
    expect(said).toContain(`could not be read from its state (${reason}`);
    expect(said).toContain(`Nothing was planned. ${fix}`);
    expect(said).toContain(
      `Only if these are the credentials of the account this stack manages: pin it with GpuCloudAccount's allowedIdentities: ["${label(vars)}"]`,
    );
    expect(said).toContain(`GPUCLOUD_UNCHECKED_ACCOUNT="${label(vars)}"`);
  };

  /** A folder of commands: `node` (this test's), and `terraform1.11` as Atlantis names its binaries; no `terraform`. */
  const atlantisPath = (): string => {
    const bin = mkdtempSync(path.join(tmpdir(), "gpucloud-atlantis-bin-"));
    symlinkSync(process.execPath, path.join(bin, "node"));
    symlinkSync(realTerraform, path.join(bin, "terraform1.11"));
    return [bin, "/usr/bin", "/bin"].filter((d) => !existsSync(path.join(d, "terraform"))).join(path.delimiter);
  };

  test("Atlantis (terraform off PATH), another account's credentials: the plan and the apply fail, nothing is written; GPUCLOUD_TERRAFORM makes the switch check work", async () => {
    const db = await pg.createDatabase("atlantis");
    await (await job(db, token, prod())).apply({ check: true });
    const [prodToken] = named(prodApi, "fc-ci");
    const before = fx.emulator.tokens().length;

    const previous = process.env.TERRAFORM_BIN;
    process.env.TERRAFORM_BIN = realTerraform; // the harness runs it by path, as Atlantis does
    try {
      const offPath = await job(db, token, staging(), { PATH: atlantisPath() });
      const plan = await offPath.plan();
      expect(plan.exitCode).toBe(1);
      expectRefusedNamingTheWaysOn(
        plan.stderr,
        "no terraform or tofu on PATH",
        "Set GPUCLOUD_TERRAFORM to the terraform or tofu that runs this plan (on Atlantis, its versioned binary)",
        staging(),
      );
      const apply = await offPath.apply();
      expect(apply.exitCode).toBe(1);
      expect(fx.emulator.tokens()).toHaveLength(before);

      const named1 = await job(db, token, staging(), { PATH: atlantisPath(), GPUCLOUD_TERRAFORM: "terraform1.11" });
      const checked = await named1.plan();
      expect(checked.exitCode).toBe(1);
      expect(oneLine(checked.stderr)).toContain(
        `managed its API tokens as ${label(prod())}, and these credentials list none of them: "fc-ci" (id ${prodToken.id})`,
      );
    } finally {
      if (previous === undefined) delete process.env.TERRAFORM_BIN;
      else process.env.TERRAFORM_BIN = previous;
    }
    expect(named(prodApi, "fc-ci")).toEqual([expect.objectContaining({ id: prodToken.id })]);
  });

  test("a wrapper that does not exec terraform: the script gets the ledger output alone, no other output, sensitive or not", async () => {
    const db = await pg.createDatabase("wrapper");
    await (await job(db, token, staging())).apply({ check: true });
    const [managed] = named(fx.emulator, "fc-ci");
    const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-wrapper-"));
    const printed = path.join(dir, "printed.txt");
    const wrapper = path.join(dir, "terraform-wrapper");
    // Runs terraform as its child (no exec) and keeps a copy of all it printed to the script.
    writeFileSync(
      wrapper,
      `#!/bin/sh\n"${realTerraform}" "$@" > "${dir}/out.$$" 2> "${dir}/err.$$"\nrc=$?\n` +
        `cat "${dir}/out.$$" >> "${printed}"\ncat "${dir}/out.$$"\ncat "${dir}/err.$$" >&2\nexit $rc\n`,
    );
    chmodSync(wrapper, 0o755);
    const wrapped = await job(db, token, staging(), { GPUCLOUD_TERRAFORM: wrapper });
    await expectSteadyPlan(wrapped);
    const seen = readFileSync(printed, "utf8");
    expect(seen).toContain(managed.id);
    expect(seen).toContain('\\"v\\":1');
    for (const secret of [OTHER_SECRET, managed.token, "other_secret", "fc_value"]) expect(seen).not.toContain(secret);
  });

  test("a state read that hangs: stopped with what it started, and the plan fails naming the binary", async () => {
    const db = await pg.createDatabase("hangs");
    await (await job(db, token, staging())).apply({ check: true });
    const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-hang-"));
    mkdirSync(path.join(dir, "bin"));
    const pidFile = path.join(dir, "child.pid");
    const wrapper = path.join(dir, "bin", "terraform-hangs");
    writeFileSync(wrapper, `#!/bin/sh\nsh -c 'echo $$ > "${pidFile}"; exec sleep 120' &\nwait\n`);
    chmodSync(wrapper, 0o755);
    // A budget of 8 s: the state read has half of it.
    const hanging = await job(db, token, staging(), { GPUCLOUD_TERRAFORM: wrapper, GPUCLOUD_TIMEOUT_SECONDS: "8" });
    const plan = await hanging.plan();
    expect(plan.exitCode).toBe(1);
    expectRefusedNamingTheWaysOn(
      plan.stderr,
      `\`${wrapper} output -json gpucloud_token_ledger\` failed: no answer within 4 s`,
      `Make the state readable by \`${wrapper} output\` in this folder and workspace`,
      staging(),
    );
    const stat = (() => {
      try {
        return readFileSync(`/proc/${readFileSync(pidFile, "utf8").trim()}/stat`, "utf8");
      } catch {
        return "";
      }
    })();
    // Gone, or a zombie that no parent reaps (under a pid 1 that reaps none).
    expect(stat === "" || stat.split(") ")[1]?.startsWith("Z")).toBe(true);
  });

  test("a first apply with -target leaves no ledger: another account's plan fails closed; one unchecked apply writes the ledger, and the check works again", async () => {
    const db = await pg.createDatabase("target");
    const first = await job(db, token, prod());
    // The stack's token writes all go through its one writer: the target of a partial first apply.
    const synthesized = JSON.parse(readFileSync(path.join(first.dir, "cdk.tf.json"), "utf8"));
    expect(Object.keys(synthesized.resource.null_resource)).toEqual(["gpucloud_token_writer"]);
    const writer = "null_resource.gpucloud_token_writer";
    await first.apply({ check: true, args: [`-target=${writer}`] });
    const [prodToken] = named(prodApi, "fc-ci");
    expect(Object.keys(await first.output())).not.toContain("gpucloud_token_ledger");

    const stagingBefore = named(fx.emulator, "fc-ci").length;
    const other = await (await job(db, token, staging())).plan();
    expect(other.exitCode).toBe(1);
    expectRefusedNamingTheWaysOn(
      other.stderr,
      `the state holds this library's token writes (${writer}) but no gpucloud_token_ledger output: a first apply with -target`,
      "Finish it with a full apply (no -target) or the destroy again",
      staging(),
    );
    expect(named(fx.emulator, "fc-ci")).toHaveLength(stagingBefore);

    // The way on for the right runner: one plan and apply with the account unchecked on purpose.
    const unchecked = await job(db, token, prod(), { GPUCLOUD_UNCHECKED_ACCOUNT: label(prod()) });
    const plan = await unchecked.plan({ check: true });
    expect(oneLine(plan.stdout)).toContain(
      `GPUCLOUD_UNCHECKED_ACCOUNT lets this plan use the credentials of account GPUCLOUD_* (${label(prod())})`,
    );
    await unchecked.apply({ check: true, planFile: plan.planFile });
    expect(named(prodApi, "fc-ci")).toEqual([expect.objectContaining({ id: prodToken.id })]);

    const refused = await (await job(db, token, staging())).plan();
    expect(refused.exitCode).toBe(1);
    expect(oneLine(refused.stderr)).toContain(`managed its API tokens as ${label(prod())}`);
    await expectSteadyPlan(await job(db, token, prod()));
  });

  test("a first apply of a computed name that fails at the API: the retry with the same credentials is warned, not refused, and converges", async () => {
    const db = await pg.createDatabase("failedfirst");
    const computed = (stack: TerraformStack) => {
      const name = new TerraformVariable(stack, "name", { type: "string", default: "fc-computed" });
      const t = new ApiToken(stack, "fc", { name: name.stringValue });
      new TerraformOutput(stack, "fc_id", { value: t.tokenId });
    };
    const first = await job(db, computed, staging(), { GPUCLOUD_TIMEOUT_SECONDS: "6" });
    const plan = await first.plan({ check: true });
    fx.emulator.setFaults({ serverErrorRate: 1, paths: ["/api-tokens"] });
    try {
      expect((await first.apply({ planFile: plan.planFile })).exitCode).toBe(1);
    } finally {
      fx.emulator.setFaults({});
    }
    const retry = await job(db, computed, staging());
    const again = await retry.plan({ check: true });
    expect(oneLine(again.stdout)).toContain("an apply of this stack ended before it wrote gpucloud_token_ledger");
    await retry.apply({ check: true, planFile: again.planFile });
    expect(named(fx.emulator, "fc-computed")).toHaveLength(1);
    await expectSteadyPlan(await job(db, computed, staging()));
  });

  test("a new stack's first plan passes: no state is no ledger to miss", async () => {
    const db = await pg.createDatabase("fresh");
    const plan = await (await job(db, token, staging())).plan({ check: true });
    expect(oneLine(plan.stdout)).not.toContain("could not be read");
  });
});
