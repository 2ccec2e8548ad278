/**
 * The claims of docs/operations.md ("Where secrets live", "Operating it"), checked with real
 * Terraform (offline, through the provider doubles) on the example stack against the emulator.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { App } from "cdktf";

import { GpuCiStack } from "../../examples/main";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  oneLine,
  type ProviderDoubles,
  startProviderDoubles,
  TerraformRunner,
} from "../support/terraform";

const USER = { username: "ops-bot", password: "ops-password-41c7" };

/** A loopback URL where nothing listens: the API being down. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describeWithTerraform("where the token value lives, and operating without the API", () => {
  let emulator: RunningEmulator;
  let doubles: ProviderDoubles;
  let outdir: string;
  let stackDir: string;
  let tf: TerraformRunner;
  let value: string;

  const env = (baseUrl: string): NodeJS.ProcessEnv => ({
    ...process.env,
    GPUCLOUD_BASE_URL: baseUrl,
    GPUCLOUD_USERNAME: USER.username,
    GPUCLOUD_PASSWORD: USER.password,
    GPUCLOUD_TIMEOUT_SECONDS: "5",
  });

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    emulator = await startEmulator({ users: [USER] });
    doubles = await startProviderDoubles();
    outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-secrets-"));
    const app = new App({ outdir });
    new GpuCiStack(app, "gpu-ci", { regionId: "norway-east-1", tokenName: "ci-secrets" });
    app.synth();
    stackDir = path.join(outdir, "stacks", "gpu-ci");
    tf = new TerraformRunner(stackDir, { doubles, env: env(emulator.url) });
    await tf.init({ check: true });
    await tf.apply({ check: true });
    value = emulator.tokens().find((t) => t.name === "ci-secrets")!.token;
    expect(value.length).toBeGreaterThan(20);
  });
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
    if (outdir && process.env.KEEP_TF_TEST_DIRS !== "1") rmSync(outdir, { recursive: true, force: true });
  });

  test("a saved plan file holds the value and is readable by group and others (mode 0644 under umask 022)", async () => {
    const planFile = path.join(stackDir, "tfplan");
    await tf.run("plan", [`-out=${planFile}`], { check: true });
    const mode = statSync(planFile).mode & 0o777;
    expect(mode & ~(0o666 & ~process.umask())).toBe(0); // no more than the umask allows
    if (process.umask() === 0o022) expect(mode).toBe(0o644);
    const shown = await tf.run("show", ["-json", planFile], { check: true });
    expect(shown.stdout).toContain(value);
  });

  test("plain `terraform show` prints the value (the data source result is not marked sensitive)", async () => {
    const shown = await tf.run("show", [], { check: true });
    expect(shown.stdout).toContain(value);
    // `terraform output` hides it unless asked for it by name or as JSON.
    const output = await tf.run("output", [], { check: true });
    expect(output.stdout).toMatch(/token = <sensitive>/);
    expect(output.stdout).not.toContain(value);
  });

  test("the state file holds the value", () => {
    // The example's LocalBackend writes terraform.tfstate into the stack folder.
    expect(readFileSync(path.join(stackDir, "terraform.tfstate"), "utf8")).toContain(value);
  });

  test("with the API down, destroy fails at the refresh; -refresh=false destroys", async () => {
    const down = new TerraformRunner(stackDir, { doubles, env: env(await deadUrl()) });
    const failed = await down.destroy();
    expect(failed.exitCode).not.toBe(0);
    expect(oneLine(failed.stderr)).toMatch(/data\.external\./);
    expect(oneLine(failed.stderr)).toMatch(/ECONNREFUSED|connection refused/);

    const destroyed = await down.run("destroy", ["-auto-approve", "-refresh=false"], { check: true });
    // The sync resource and the stack's roster; the roster's warning needs no API.
    expect(destroyed.stdout).toMatch(/Destroy complete! Resources: 2 destroyed\./);
    expect(oneLine(destroyed.stdout)).toMatch(/WARNING: API token "ci-secrets" \(id \S+\) stays ACTIVE: the stack is being destroyed/);
    // The token itself stays: the API has no delete operation.
    expect(emulator.tokens().filter((t) => t.name === "ci-secrets")).toHaveLength(1);
  });
});
