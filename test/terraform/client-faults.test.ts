/**
 * With real Terraform (offline, through the provider doubles) against a faulty emulator: the
 * headline cases of issue 7 that a single client test cannot show, because an apply runs the
 * plan-time read, the stack's token writer and its read after the writes as separate processes
 * that share the server's failures.
 */
import { ApiToken } from "../../src";
import type { EmulatorFaults, RunningEmulator } from "../../src/emulator";
import { describeWithTerraform, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "pipeline", password: "pipeline-password-7c1e" };

describeWithTerraform("real Terraform under faults: converge in one apply, never duplicate", () => {
  // An emulator per test: each starts with its own tokens and faults.
  const fx = terraformFixture({ timeoutSeconds: 60 });

  async function setUp(existing: number, faults: EmulatorFaults, names: string[]): Promise<{ emu: RunningEmulator; tf: TerraformRunner }> {
    const emu = await fx.startEmulator({ users: [USER], maxPageSize: 50 });
    for (let i = 0; i < existing; i++) emu.addToken({ name: `old-${i}`, createdAt: 1_700_000_000 + i });
    const tf = await fx.stack(
      (stack) => {
        for (const name of names) new ApiToken(stack, name, { name, description: `token ${name}` });
      },
      { env: fx.env({}, USER, emu), prefix: "gpucloud-faults-" },
    );
    emu.setFaults(faults);
    return { emu, tf };
  }

  const count = (emu: RunningEmulator, name: string) => fx.named(name, emu).length;

  test("a 502 on every 3rd request, 60 tokens on the account: a 3-token apply converges at once, 0 duplicates", async () => {
    const names = ["ci-a", "ci-b", "ci-c"];
    const { emu, tf } = await setUp(60, { serverErrorEvery: 3 }, names);
    const applied = await tf.apply({ check: true });
    for (const name of names) expect(count(emu, name)).toBe(1);
    expect(emu.tokens()).toHaveLength(63);
    expect(emu.stats().byRoute["POST /api-tokens"]).toBeGreaterThanOrEqual(3);
    // The writer's one process wrote all three, each reported once.
    expect(applied.stdout).toContain("gpucloud: 3 of 3 tokens written");
    for (const name of names) {
      const [token] = fx.named(name, emu);
      expect(applied.stdout.match(new RegExp(`(created|adopted) API token "${name}" \\(id ${token.id}\\)`, "g"))).toHaveLength(1);
    }
    const again = await tf.plan({ detailedExitCode: true, check: true });
    expect(again.exitCode).toBe(0);
  }, 240_000);

  test("a create that commits 3 s after a 504 is adopted: one apply, one token", async () => {
    const { emu, tf } = await setUp(5, { gatewayTimeoutCreates: 1, createCommitDelayMs: 3000 }, ["late"]);
    const applied = await tf.apply({ check: true });
    expect(count(emu, "late")).toBe(1);
    expect(emu.stats().byRoute["POST /api-tokens"]).toBe(1);
    const [late] = fx.named("late", emu);
    expect(applied.stdout).toContain(`adopted API token "late" (id ${late.id}): created by an earlier attempt whose response was lost`);
    expect(applied.stdout).toContain("gpucloud: 1 of 1 tokens written");
    // One line per outcome: not "adopted" and then "created" for the same token.
    expect(applied.stdout).not.toContain('created API token "late"');
    expect((await tf.plan({ detailedExitCode: true, check: true })).exitCode).toBe(0);
  }, 240_000);
});
