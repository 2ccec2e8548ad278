/**
 * The README's pipeline recipe, `cdktf deploy`, run by the real cdktf-cli 0.21 on the example app
 * against the emulator, offline through the provider doubles: synth, deploy, deploy again (no
 * changes), destroy.
 *
 * cdktf-cli is not a devDependency (about 420 MB installed, see CONTRIBUTING.md, "Tests"):
 * the first run installs it into node_modules/.cache/cdktf-cli-<version> (about 25 s
 * from the npm registry), later runs reuse it. CDKTF_CLI_BIN=<path to cdktf> uses a given one.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  repoRoot,
  startProviderDoubles,
  TerraformRunner,
} from "../support/terraform";
const { cachedInstall } = require("../../scripts/cached-install.cjs");

const CDKTF_CLI_VERSION = "0.21.0";
const USER = { username: "cli-bot", password: "cli-password-93ab" };
const STACK = "gpu-ci";

/** The cdktf binary: $CDKTF_CLI_BIN, or cdktf-cli installed (once) under node_modules/.cache. */
function cdktfCli(): string {
  if (process.env.CDKTF_CLI_BIN) return process.env.CDKTF_CLI_BIN;
  return cachedInstall({
    root: repoRoot(),
    folder: `cdktf-cli-${CDKTF_CLI_VERSION}`,
    spec: `cdktf-cli@${CDKTF_CLI_VERSION}`,
    bin: "cdktf",
    onInstalled: (seconds: number, dir: string) =>
      console.log(`cdktf-cli@${CDKTF_CLI_VERSION} installed into ${path.relative(repoRoot(), dir)} in ${seconds.toFixed(1)} s`),
  });
}

interface CliResult {
  code: number | null;
  output: string;
}

describeWithTerraform("cdktf-cli deploy of the example against the emulator", () => {
  let emulator: RunningEmulator;
  let doubles: ProviderDoubles;
  let project: string;
  let stackDir: string;
  let tf: TerraformRunner;
  let cli: string;

  /** Runs `cdktf <args>` in the project with Terraform's environment (doubles included). */
  const cdktf = async (args: string[]): Promise<CliResult> => {
    const reattach = await tf.reattachProviders();
    const env = { ...tf.env, TF_REATTACH_PROVIDERS: reattach, CI: "1", FORCE_COLOR: "0" };
    return new Promise<CliResult>((resolve) => {
      const child = spawn(cli, args, { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr.on("data", (d: Buffer) => (output += d.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  };
  const expectOk = (res: CliResult): string => {
    if (res.code !== 0) throw new Error(`cdktf exited with ${res.code}:\n${res.output}`);
    return res.output;
  };

  beforeAll(async () => {
    cli = cdktfCli();
    ensureProviderDoublesBuilt();
    emulator = await startEmulator({ users: [USER] });
    doubles = await startProviderDoubles();
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
    tf = new TerraformRunner(stackDir, {
      doubles,
      env: credentialsEnv(emulator, USER),
    });
  }, 330_000);
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
    if (project && process.env.KEEP_TF_TEST_DIRS !== "1") rmSync(project, { recursive: true, force: true });
  });

  test("synth writes the stack folder with the runtime script", async () => {
    expectOk(await cdktf(["synth", "--no-color"]));
    expect(existsSync(path.join(stackDir, "cdk.tf.json"))).toBe(true);
  }, 180_000);

  test("deploy --skip-provider-lock creates the token and prints the outputs", async () => {
    const out = expectOk(await cdktf(["deploy", STACK, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    const tokens = emulator.tokens().filter((t) => t.name === "ci-pipeline");
    expect(tokens).toHaveLength(1);
    expect(out).toContain(`token_id = "${tokens[0].id}"`);
    expect(out).toContain("token = <sensitive>");
    expect(out).not.toContain(tokens[0].token);
  }, 180_000);

  test("deploy again changes nothing and writes nothing to the API", async () => {
    emulator.resetStats();
    const out = expectOk(await cdktf(["deploy", STACK, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    expect(out).toMatch(/No changes|no differences/);
    expect(emulator.stats().tokenWrites).toBe(0);
    expect(emulator.tokens().filter((t) => t.name === "ci-pipeline")).toHaveLength(1);
  }, 180_000);

  test("destroy empties the state", async () => {
    expectOk(await cdktf(["destroy", STACK, "--auto-approve", "--skip-provider-lock", "--no-color"]));
    const state = await tf.show();
    expect(state.values?.root_module?.resources ?? []).toEqual([]);
  }, 180_000);
});
