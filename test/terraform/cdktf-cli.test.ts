/**
 * The README's pipeline recipe, `cdktf deploy`, run by the real cdktf-cli 0.21 on the example app
 * against the emulator, offline through the provider doubles: synth, deploy, deploy again (no
 * changes), destroy.
 *
 * cdktf-cli is not a devDependency (about 420 MB installed, see CONTRIBUTING.md, "Tests"):
 * the first run installs it into node_modules/.cache/cdktf-cli-<version> (about 25 s
 * from the npm registry), later runs reuse it. CDKTF_CLI_BIN=<path to cdktf> uses a given one.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { cdktfCli, type CliResult, expectOk, runCdktf } from "../support/cdktf-cli";
import { describeWithTerraform, repoRoot, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "cli-bot", password: "cli-password-93ab" };
const STACK = "gpu-ci";

describeWithTerraform("cdktf-cli deploy of the example against the emulator", () => {
  const fx = terraformFixture({ users: [USER] });
  let project: string;
  let stackDir: string;
  let tf: TerraformRunner;
  let cli: string;

  /** Runs `cdktf <args>` in the project with Terraform's environment (doubles included). */
  const cdktf = async (args: string[]): Promise<CliResult> => {
    const reattach = await tf.reattachProviders();
    const env = { ...tf.env, TF_REATTACH_PROVIDERS: reattach, CI: "1", FORCE_COLOR: "0" };
    return runCdktf(cli, args, { cwd: project, env, killAfterMs: 150_000 });
  };

  beforeAll(async () => {
    cli = cdktfCli();
    project = mkdtempSync(path.join(tmpdir(), "gpucloud-cdktf-cli-"));
    writeFileSync(
      path.join(project, "cdktf.json"),
      `${JSON.stringify(
        {
          language: "typescript",
          app: `node ${JSON.stringify(path.join(repoRoot(), "build", "examples", "main.js"))}`,
          projectId: "4f0b6a7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
          sendCrashReports: "false",
          terraformProviders: [],
          terraformModules: [],
        },
        null,
        2,
      )}\n`,
    );
    stackDir = path.join(project, "cdktf.out", "stacks", STACK);
    mkdirSync(stackDir, { recursive: true }); // the doubles session's working directory
    tf = fx.runner(stackDir);
  }, 330_000);
  afterAll(() => {
    if (project && process.env.KEEP_TF_TEST_DIRS !== "1") rmSync(project, { recursive: true, force: true });
  });

  test("synth writes the stack folder with the runtime script", async () => {
    expectOk(await cdktf(["synth", "--no-color"]));
    expect(existsSync(path.join(stackDir, "cdk.tf.json"))).toBe(true);
  }, 180_000);

  test("deploy --skip-provider-lock creates the token and prints the outputs", async () => {
    const out = expectOk(await cdktf(["deploy", STACK, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    const tokens = fx.named("ci-pipeline");
    expect(tokens).toHaveLength(1);
    expect(out).toContain(`token_id = "${tokens[0].id}"`);
    expect(out).toContain("token = <sensitive>");
    expect(out).not.toContain(tokens[0].token);
  }, 180_000);

  test("deploy again changes nothing and writes nothing to the API", async () => {
    fx.emulator.resetStats();
    const out = expectOk(await cdktf(["deploy", STACK, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    expect(out).toMatch(/No changes|no differences/);
    expect(fx.emulator.stats().tokenWrites).toBe(0);
    expect(fx.named("ci-pipeline")).toHaveLength(1);
  }, 180_000);

  test("destroy empties the state", async () => {
    expectOk(await cdktf(["destroy", STACK, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    const state = await tf.show();
    expect(state.values?.root_module?.resources ?? []).toEqual([]);
  }, 180_000);
});
