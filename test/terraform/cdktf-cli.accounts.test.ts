/**
 * The README's "Accounts" recipe: one app, a `staging` and a `prod` stack, each on its own GPU
 * cloud account, deployed by the real cdktf-cli 0.21 in one `cdktf deploy staging prod`, offline
 * through the provider doubles, each account an emulator of its own.
 *
 * cdktf-cli runs one terraform per stack folder from one environment, so one TF_REATTACH_PROVIDERS
 * for both; a real provider started by terraform runs its programs in that terraform's folder.
 * TERRAFORM_BINARY_NAME (cdktf-cli's own setting) points at a small wrapper that gives each stack
 * folder its own doubles session, so that each stack's scripts run in its own folder, as there.
 * cdktf-cli is installed on first use as in cdktf-cli.test.ts (or CDKTF_CLI_BIN).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import type { RunningEmulator } from "../../src/emulator";
import { cdktfCli, type CliResult, expectOk, runCdktf } from "../support/cdktf-cli";
import { describeWithTerraform, repoRoot, terraformBinary, TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const STAGING = { username: "staging-bot", password: "staging-password-cli-81d2" };
const PROD = { username: "prod-bot", password: "prod-password-cli-4e77" };
const STACKS = ["staging", "prod"] as const;

/** The parts of a local state file read here. */
interface TfState {
  resources: { type: string; name: string }[];
  outputs: Record<string, { value: string }>;
}

/** The README's two-stack app, on the built library. */
function appSource(root: string): string {
  return `const { App, LocalBackend, TerraformOutput, TerraformStack } = require(${JSON.stringify(path.join(root, "node_modules", "cdktf"))});
const { ApiToken, GpuCloudAccount } = require(${JSON.stringify(path.join(root, "lib"))});

const app = new App();
const accounts = {
  staging: new GpuCloudAccount(app, "staging-account", { envPrefix: "GPUCLOUD_STAGING_" }),
  prod: new GpuCloudAccount(app, "prod-account", { envPrefix: "GPUCLOUD_PROD_" }),
};
for (const [id, account] of Object.entries(accounts)) {
  const stack = new TerraformStack(app, id);
  new LocalBackend(stack, { path: "terraform.tfstate" });
  const token = new ApiToken(stack, "ci", { name: "ci-pipeline", account });
  new TerraformOutput(stack, "token_id", { value: token.tokenId });
}
app.synth();
`;
}

describeWithTerraform("cdktf deploy of two stacks on two accounts in one run", () => {
  // Staging is the fixture's emulator; prod is one more.
  const fx = terraformFixture({ users: [STAGING] });
  let staging: RunningEmulator;
  let prod: RunningEmulator;
  let project: string;
  let cli: string;
  let env: NodeJS.ProcessEnv;
  const printed: string[] = [];

  const cdktf = async (args: string[]): Promise<CliResult> => {
    const res = await runCdktf(cli, args, { cwd: project, env, killAfterMs: 170_000 });
    printed.push(res.output);
    return res;
  };

  beforeAll(async () => {
    cli = cdktfCli();
    staging = fx.emulator;
    prod = await fx.startEmulator({ users: [PROD] });
    project = mkdtempSync(path.join(tmpdir(), "gpucloud-cdktf-accounts-"));
    writeFileSync(path.join(project, "main.js"), appSource(repoRoot()));
    writeFileSync(
      path.join(project, "cdktf.json"),
      `${JSON.stringify({ language: "typescript", app: "node main.js", projectId: "7a1c2d3e-4f50-4a6b-9c8d-0e1f2a3b4c5d", sendCrashReports: "false", terraformProviders: [], terraformModules: [] }, null, 2)}\n`,
    );
    // Terraform's environment as the pipeline gives it: each account's variables, nothing else of ours.
    const base = new TerraformRunner(project).env;
    env = {
      ...base,
      GPUCLOUD_STAGING_BASE_URL: staging.url,
      GPUCLOUD_STAGING_USERNAME: STAGING.username,
      GPUCLOUD_STAGING_PASSWORD: STAGING.password,
      GPUCLOUD_PROD_BASE_URL: prod.url,
      GPUCLOUD_PROD_USERNAME: PROD.username,
      GPUCLOUD_PROD_PASSWORD: PROD.password,
      GPUCLOUD_TIMEOUT_SECONDS: "30",
      CI: "1",
      FORCE_COLOR: "0",
    };
    const cases: string[] = [];
    for (const stack of STACKS) {
      const dir = path.join(project, "cdktf.out", "stacks", stack);
      mkdirSync(dir, { recursive: true }); // the doubles session's working directory
      const reattach = await fx.doubles.session({ cwd: dir, env });
      const variable = `DOUBLES_REATTACH_${stack.toUpperCase()}`;
      env[variable] = reattach;
      cases.push(`  */cdktf.out/stacks/${stack}) TF_REATTACH_PROVIDERS="$${variable}" ;;`);
    }
    const wrapper = path.join(project, "terraform-with-doubles.sh");
    writeFileSync(
      wrapper,
      `#!/bin/sh\n# The provider doubles' session of the stack folder this terraform runs in.\ncase "$(pwd)" in\n${cases.join("\n")}\nesac\nexport TF_REATTACH_PROVIDERS\nexec ${JSON.stringify(terraformBinary())} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    env.TERRAFORM_BINARY_NAME = wrapper;
  }, 330_000);
  afterAll(() => {
    if (project && process.env.KEEP_TF_TEST_DIRS !== "1") rmSync(project, { recursive: true, force: true });
  });

  test("one `cdktf deploy staging prod` creates each stack's token on its own account, through that stack's writer of the account", async () => {
    const out = expectOk(await cdktf(["deploy", ...STACKS, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    const onStaging = staging.tokens().filter((t) => t.name === "ci-pipeline");
    const onProd = prod.tokens().filter((t) => t.name === "ci-pipeline");
    expect(onStaging).toHaveLength(1);
    expect(onProd).toHaveLength(1);
    expect(out).toContain(`token_id = "${onStaging[0].id}"`);
    expect(out).toContain(`token_id = "${onProd[0].id}"`);
    for (const stack of STACKS) {
      const dir = path.join(project, "cdktf.out", "stacks", stack);
      const token = (stack === "staging" ? onStaging : onProd)[0];
      const account = stack === "staging" ? staging : prod;
      const state = JSON.parse(readFileSync(path.join(dir, "terraform.tfstate"), "utf8")) as TfState;
      // Each stack's one writer is its account's (it read its inputs file relative to its own stack folder).
      expect(state.resources.filter((r) => r.type === "null_resource").map((r) => r.name)).toEqual([
        `gpucloud_token_writer_gpucloud_${stack}`,
      ]);
      expect(out).toContain(`created API token "ci-pipeline" (id ${token.id}) for ${stack}/ci`);
      // The stack's ledger holds its token on its account; nothing else is kept beside the state.
      expect(JSON.parse(state.outputs.gpucloud_token_ledger.value).t).toEqual({
        [`${stack}/ci`]: ["ci-pipeline", token.id, `GPUCLOUD_${stack.toUpperCase()}_ ${account.url.replace(/\/+$/, "")}`, ""],
      });
      // (Node 22 and later write the script's compile cache, .gpucloud-cache: code, nothing of a run.)
      expect(readdirSync(dir).filter((f) => f.startsWith(".gpucloud") && f !== ".gpucloud-cache")).toEqual([]);
    }
  }, 180_000);

  test("deploying both again changes nothing and writes nothing to either account", async () => {
    staging.resetStats();
    prod.resetStats();
    const out = expectOk(await cdktf(["deploy", ...STACKS, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    expect(out).toMatch(/No changes|no differences/);
    expect(staging.stats().tokenWrites + prod.stats().tokenWrites).toBe(0);
    expect(staging.tokens()).toHaveLength(1);
    expect(prod.tokens()).toHaveLength(1);
  }, 180_000);

  test("no password of either account in anything cdktf printed", () => {
    expect(printed.length).toBeGreaterThan(0);
    for (const text of printed) {
      expect(text).not.toContain(STAGING.password);
      expect(text).not.toContain(PROD.password);
    }
  });
});
