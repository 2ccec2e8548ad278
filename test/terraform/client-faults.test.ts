/**
 * With real Terraform (offline, through the provider doubles) against a faulty emulator: the
 * headline cases of issue 7 that a single client test cannot show, because Terraform runs the
 * scripts of several resources in parallel processes that share the server's failures.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { App, LocalBackend, TerraformStack } from "cdktf";
import { ApiToken } from "../../src";
import { startEmulator, type EmulatorFaults, type RunningEmulator } from "../../src/emulator";
import { describeWithTerraform, ensureProviderDoublesBuilt, startProviderDoubles, TerraformRunner, type ProviderDoubles } from "../support/terraform";

const USER = { username: "pipeline", password: "pipeline-password-7c1e" };

describeWithTerraform("real Terraform under faults: converge in one apply, never duplicate", () => {
  let doubles: ProviderDoubles;
  const emulators: RunningEmulator[] = [];

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    doubles = await startProviderDoubles();
  });
  afterAll(async () => {
    await doubles?.stop();
    await Promise.all(emulators.map((e) => e.close()));
  });

  async function setUp(existing: number, faults: EmulatorFaults, names: string[]): Promise<{ emu: RunningEmulator; tf: TerraformRunner }> {
    const emu = await startEmulator({ users: [USER], maxPageSize: 50 });
    emulators.push(emu);
    for (let i = 0; i < existing; i++) emu.addToken({ name: `old-${i}`, createdAt: 1_700_000_000 + i });
    const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-faults-"));
    const app = new App({ outdir });
    const stack = new TerraformStack(app, "s");
    new LocalBackend(stack, { path: "terraform.tfstate" });
    for (const name of names) new ApiToken(stack, name, { name, description: `token ${name}` });
    app.synth();
    const env = {
      ...process.env,
      GPUCLOUD_BASE_URL: emu.url,
      GPUCLOUD_USERNAME: USER.username,
      GPUCLOUD_PASSWORD: USER.password,
      GPUCLOUD_TIMEOUT_SECONDS: "60",
    };
    const tf = new TerraformRunner(path.join(outdir, "stacks", "s"), { doubles, env });
    await tf.init({ check: true });
    emu.setFaults(faults);
    return { emu, tf };
  }

  const count = (emu: RunningEmulator, name: string) => emu.tokens().filter((t) => t.name === name).length;

  test("a 502 on every 3rd request, 60 tokens on the account: a 3-token apply converges at once, 0 duplicates", async () => {
    const names = ["ci-a", "ci-b", "ci-c"];
    const { emu, tf } = await setUp(60, { serverErrorEvery: 3 }, names);
    await tf.apply({ check: true });
    for (const name of names) expect(count(emu, name)).toBe(1);
    expect(emu.tokens()).toHaveLength(63);
    expect(emu.stats().byRoute["POST /api-tokens"]).toBeGreaterThanOrEqual(3);
    const again = await tf.plan({ detailedExitCode: true, check: true });
    expect(again.exitCode).toBe(0);
  }, 240_000);

  test("a create that commits 3 s after a 504 is adopted: one apply, one token", async () => {
    const { emu, tf } = await setUp(5, { gatewayTimeoutCreates: 1, createCommitDelayMs: 3000 }, ["late"]);
    const applied = await tf.apply({ check: true });
    expect(count(emu, "late")).toBe(1);
    expect(emu.stats().byRoute["POST /api-tokens"]).toBe(1);
    expect(applied.stdout).toMatch(/adopted API token "late"/);
  }, 240_000);
});
