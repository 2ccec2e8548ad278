/**
 * Several GPU cloud accounts in one stack, under real Terraform (offline, through the provider
 * doubles), each account an emulator of its own: the default account (GPUCLOUD_*) and
 * `GPUCLOUD_PROD_*`. Runs on both flavours (npm run test:cdktn maps ../../src to lib-cdktn).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";

import { ApiToken, FlavorPreference, Flavors, GpuCloudAccount } from "../../src";
import type { RunningEmulator } from "../../src/emulator";
import type { SynthFolder } from "../support/synth-folder";
import { type CommandResult, describeWithTerraform, oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const STAGING = { username: "staging-bot", password: "staging-password-6d1e" };
const PROD = { username: "prod-bot", password: "prod-password-93fa-secret" };
const STACK = "two-accounts";

/** The trigger lines the plan text shows for the writer `name` (`- "two-accounts/mover.name" = "mover" -> null`), sorted. */
function writerKeys(text: string, name: string): string[] {
  const block = new RegExp(`resource "null_resource" "${name}" \\{[\\s\\S]*?\\n {4}\\}`).exec(text)?.[0] ?? "";
  return [...block.matchAll(/^\s*([~+-])\s+("[\w/-]+\.(?:name|description|in_sync)")\s+=\s+(.*?)\s*$/gm)]
    .map((m) => oneLine(`${m[1]} ${m[2]} = ${m[3]}`))
    .sort();
}

/** The state's null_resources (the token writers), each with its trigger keys, sorted. */
async function writersInState(tf: TerraformRunner): Promise<Record<string, string[]>> {
  const resources = (await tf.show()).values?.root_module?.resources ?? [];
  return Object.fromEntries(
    resources
      .filter((r) => r.type === "null_resource")
      .map((r) => [r.address, Object.keys(r.values.triggers as Record<string, string>).sort()]),
  );
}

describeWithTerraform("two accounts in one stack, under real Terraform", () => {
  // The default account is the fixture's emulator; prod is one more.
  const fx = terraformFixture({ users: [STAGING] });
  let staging: RunningEmulator;
  let prod: RunningEmulator;
  let folder: SynthFolder;
  let stackDir: string;
  let tf: TerraformRunner;
  /** Every line Terraform printed in this suite, to look for the second account's secrets. */
  const printed: string[] = [];
  const keep = <T extends CommandResult>(res: T): T => {
    printed.push(res.stdout, res.stderr);
    return res;
  };

  const env = (over: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv =>
    fx.env({ GPUCLOUD_PROD_BASE_URL: prod.url, GPUCLOUD_PROD_USERNAME: PROD.username, GPUCLOUD_PROD_PASSWORD: PROD.password, ...over });

  /** The stack; `moverOnProd` moves the ApiToken "mover" from the default account to prod. */
  function synth(moverOnProd: boolean): void {
    folder.synthApp((app) => build(app, moverOnProd));
  }
  function build(app: App, moverOnProd: boolean): void {
    const prodAccount = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_" });
    const stack = new TerraformStack(app, STACK);
    new LocalBackend(stack, { path: "terraform.tfstate" });
    const stagingCi = new ApiToken(stack, "staging-ci", { name: "ci", description: "staging CI" });
    const prodCi = new ApiToken(stack, "prod-ci", { name: "ci", description: "prod CI", account: prodAccount });
    new ApiToken(stack, "prod-deploy", { name: "deploy", account: prodAccount });
    new ApiToken(stack, "mover", { name: "mover", account: moverOnProd ? prodAccount : undefined });
    new TerraformOutput(stack, "staging_ci_id", { value: stagingCi.tokenId });
    new TerraformOutput(stack, "prod_ci_id", { value: prodCi.tokenId });
  }

  beforeAll(async () => {
    staging = fx.emulator;
    prod = await fx.startEmulator({ users: [PROD] });
    folder = fx.folder({ prefix: "gpucloud-accounts-", stackId: STACK });
    synth(false);
    stackDir = folder.dir;
    tf = await fx.init(stackDir, { env: env() });
  });

  test("a token of the same name on each account: two tokens, each on its own account", async () => {
    const apply = keep(await tf.apply());
    expect(apply.stderr).toBe("");
    expect(apply.exitCode).toBe(0);
    const stagingCi = staging.tokens().filter((t) => t.name === "ci");
    const prodCi = prod.tokens().filter((t) => t.name === "ci");
    expect(stagingCi).toEqual([expect.objectContaining({ description: "staging CI" })]);
    expect(prodCi).toEqual([expect.objectContaining({ description: "prod CI" })]);
    expect(
      prod
        .tokens()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["ci", "deploy"]);
    expect(
      staging
        .tokens()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["ci", "mover"]);
    const outputs = await tf.output();
    expect(outputs.staging_ci_id.value).toBe(stagingCi[0].id);
    expect(outputs.prod_ci_id.value).toBe(prodCi[0].id);
    // One writer per account, each holding the keys of its own account's tokens only.
    expect(await writersInState(tf)).toEqual({
      "null_resource.gpucloud_token_writer": [
        "two-accounts/mover.in_sync",
        "two-accounts/mover.name",
        "two-accounts/staging-ci.description",
        "two-accounts/staging-ci.in_sync",
        "two-accounts/staging-ci.name",
      ],
      "null_resource.gpucloud_token_writer_gpucloud_prod": [
        "account.env_prefix",
        "two-accounts/prod-ci.description",
        "two-accounts/prod-ci.in_sync",
        "two-accounts/prod-ci.name",
        "two-accounts/prod-deploy.in_sync",
        "two-accounts/prod-deploy.name",
      ],
    });
    const log = oneLine(apply.stdout);
    expect(log).toContain(`created API token "ci" (id ${stagingCi[0].id}) for two-accounts/staging-ci`);
    expect(log).toContain(`created API token "ci" (id ${prodCi[0].id}) for two-accounts/prod-ci`);
  });

  test("the steady plan has no changes and logs in once per account", async () => {
    staging.resetStats();
    prod.resetStats();
    const plan = keep(await tf.plan({ detailedExitCode: true }));
    expect(plan.exitCode).toBe(0);
    expect(staging.stats().logins).toBe(1);
    expect(prod.stats().logins).toBe(1);
    // One list walk each (every list here fits on one page).
    expect(staging.stats().byRoute["GET /api-tokens"]).toBe(1);
    expect(prod.stats().byRoute["GET /api-tokens"]).toBe(1);
    expect(staging.stats().tokenWrites + prod.stats().tokenWrites).toBe(0);
  });

  test("a missing variable of one account fails the plan naming exactly that account's variables", async () => {
    const missing = fx.runner(stackDir, { env: env({ GPUCLOUD_PROD_USERNAME: "", GPUCLOUD_PROD_PASSWORD: "" }) });
    const plan = keep(await missing.plan({}));
    expect(plan.exitCode).toBe(1);
    const stderr = plan.stderr.replace(/[\s│]+/g, " ");
    const error = /gpucloud: error: (.*?) State:/.exec(stderr)?.[1];
    expect(error).toBe(
      "stack-read: no credentials: set GPUCLOUD_PROD_API_TOKEN, or GPUCLOUD_PROD_USERNAME with GPUCLOUD_PROD_PASSWORD " +
        "(plain text) or GPUCLOUD_PROD_PASSWORD_MD5 (its md5 hex), in the environment of the process that runs terraform " +
        // The constructs that read through that account, and only those: the data source's error names none.
        '(read for ApiToken "two-accounts/prod-ci", ApiToken "two-accounts/prod-deploy")',
    );
  });

  test("moving an ApiToken to another account moves its keys from one writer to the other, creates it there and warns that the old token stays active", async () => {
    const old = staging.tokens().find((t) => t.name === "mover")!;
    synth(true);
    const plan = keep(await tf.plan({ check: true }));
    // Each account's writer is replaced: the default one loses the token's keys, prod's gains them.
    expect(writerKeys(plan.stdout, "gpucloud_token_writer")).toEqual([
      '- "two-accounts/mover.in_sync" = "true" -> null',
      '- "two-accounts/mover.name" = "mover" -> null',
    ]);
    expect(writerKeys(plan.stdout, "gpucloud_token_writer_gpucloud_prod")).toEqual([
      '+ "two-accounts/mover.in_sync" = (known after apply)',
      '+ "two-accounts/mover.name" = "mover"',
    ]);
    // In the plan the reviewer approves, from the state's ledger.
    expect(oneLine(plan.stdout)).toContain(
      `API token "mover" (id ${old.id}) on user ${STAGING.username} at ${staging.url.replace(/\/+$/, "")} (account GPUCLOUD_*) ` +
        `stays ACTIVE: the ApiToken "two-accounts/mover" moved to the account GPUCLOUD_PROD_*`,
    );
    staging.resetStats();
    const apply = keep(await tf.apply({ planFile: plan.planFile }));
    expect(apply.exitCode).toBe(0);
    const [moved] = prod.tokens().filter((t) => t.name === "mover");
    expect(prod.tokens().filter((t) => t.name === "mover")).toHaveLength(1);
    expect(oneLine(apply.stdout)).toContain(`created API token "mover" (id ${moved.id}) for two-accounts/mover`);
    // The old token is left as it was: the default account's writer ran for its other token, in sync, and wrote nothing.
    expect(staging.stats().tokenWrites).toBe(0);
    expect(staging.tokens().find((t) => t.id === old.id)?.name).toBe("mover");
    // Said once: the ledger now holds the token on prod.
    const again = keep(await tf.plan({ detailedExitCode: true }));
    expect(again.exitCode).toBe(0);
    expect(again.stdout).not.toContain("stays ACTIVE");
  });

  test("the second account's password is in no line Terraform printed (TF_LOG=trace included) and not in the state", async () => {
    const traced = fx.runner(stackDir, { env: env({ TF_LOG: "trace" }) });
    const plan = keep(await traced.plan({ detailedExitCode: true }));
    expect(plan.exitCode).toBe(0);
    expect(plan.stderr.length).toBeGreaterThan(10_000); // the trace log was there to look at
    const all = printed.join("\n");
    expect(all).toContain("GPUCLOUD_PROD_");
    expect(all).not.toContain(PROD.password);
    expect(all).not.toContain(STAGING.password);
    expect(readFileSync(path.join(stackDir, "terraform.tfstate"), "utf8")).not.toContain(PROD.password);
    expect(readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8")).not.toContain(PROD.password);
  });
});

describeWithTerraform("two accounts on one API address, under real Terraform", () => {
  const A = { username: "team-a", password: "team-a-password-11", account: "a" };
  const B = { username: "team-b", password: "team-b-password-22", account: "b" };
  const fx = terraformFixture({ users: [A, B] });

  test("the app-wide name check: one literal name on one account in two stacks fails synth naming both paths", () => {
    const app = new App({ outdir: mkdtempSync(path.join(tmpdir(), "gpucloud-accounts-check-")) });
    const prod = new GpuCloudAccount(app, "prod-account", { envPrefix: "GPUCLOUD_PROD_" });
    new ApiToken(new TerraformStack(app, "staging"), "ci", { name: "ci" });
    new ApiToken(new TerraformStack(app, "prod"), "ci", { name: "ci", account: prod }); // another account: allowed
    expect(() => new ApiToken(new TerraformStack(app, "prod-2"), "ci", { name: "ci", account: prod })).toThrow(
      'ApiToken "prod-2/ci": name "ci" is also the name of ApiToken "prod/ci": two ApiTokens of one app would manage the same API token (on the account GPUCLOUD_PROD_*)',
    );
  });

  test("a token of one name in each account: two tokens, an empty steady plan with one login per account", async () => {
    const { url } = fx.emulator;
    const folder = fx.folder({ prefix: "gpucloud-accounts-one-url-", stackId: "one-url" }).synthApp((app) => {
      const b = new GpuCloudAccount(app, "b", { envPrefix: "GPUCLOUD_B_", baseUrl: url });
      const stack = new TerraformStack(app, "one-url");
      new LocalBackend(stack, { path: "terraform.tfstate" });
      new ApiToken(stack, "in-a", { name: "shared", baseUrl: url });
      new ApiToken(stack, "in-b", { name: "shared", account: b });
    });
    // The default account's address is the construct's baseUrl alone: no GPUCLOUD_BASE_URL.
    const tf = await fx.init(folder.dir, {
      env: {
        ...process.env,
        GPUCLOUD_USERNAME: A.username,
        GPUCLOUD_PASSWORD: A.password,
        GPUCLOUD_B_USERNAME: B.username,
        GPUCLOUD_B_PASSWORD: B.password,
      },
    });
    await tf.apply({ check: true });
    expect(
      fx.emulator
        .tokens()
        .map((t) => [t.account, t.name])
        .sort(),
    ).toEqual([
      ["a", "shared"],
      ["b", "shared"],
    ]);
    // Two writers: the default account's with a digest of the construct's baseUrl, b's with its prefix too.
    const writers = await writersInState(tf);
    expect(Object.keys(writers).sort()).toEqual([
      expect.stringMatching(/^null_resource\.gpucloud_token_writer_[0-9a-f]{8}$/),
      expect.stringMatching(/^null_resource\.gpucloud_token_writer_gpucloud_b_[0-9a-f]{8}$/),
    ]);
    expect(Object.entries(writers).map(([address, keys]) => [address.includes("_gpucloud_b_") ? "b" : "a", keys])).toEqual(
      expect.arrayContaining([
        ["a", ["account.base_url", "one-url/in-a.in_sync", "one-url/in-a.name"]],
        ["b", ["account.base_url", "account.env_prefix", "one-url/in-b.in_sync", "one-url/in-b.name"]],
      ]),
    );
    fx.emulator.resetStats();
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
    expect(fx.emulator.stats().logins).toBe(2);
    expect(fx.emulator.stats().tokenWrites).toBe(0);
  });

  test("Flavors and FlavorPreference read with their account's variables only", async () => {
    const folder = fx.folder({ prefix: "gpucloud-accounts-one-url-", stackId: "flavors" }).synthApp((app) => {
      const b = new GpuCloudAccount(app, "b", { envPrefix: "GPUCLOUD_B_" });
      const stack = new TerraformStack(app, "flavors");
      const gpus = new Flavors(stack, "gpus", { regionId: "norway-east-1", gpu: "H100", spot: false, account: b });
      const pick = new FlavorPreference(stack, "pick", { choices: [{ gpu: "H100", regionId: "norway-east-1", spot: false }], account: b });
      new TerraformOutput(stack, "cheapest", { value: gpus.cheapestId });
      new TerraformOutput(stack, "picked", { value: pick.flavorId });
    });
    // No GPUCLOUD_* account at all: only GPUCLOUD_B_* is there to be read.
    const tf = await fx.init(folder.dir, {
      env: { ...process.env, GPUCLOUD_B_BASE_URL: fx.emulator.url, GPUCLOUD_B_USERNAME: B.username, GPUCLOUD_B_PASSWORD: B.password },
    });
    await tf.apply({ check: true });
    const outputs = await tf.output();
    expect(outputs.cheapest.value).toBe("no1-h100x1");
    expect(outputs.picked.value).toBe("no1-h100x1");
  });
});
