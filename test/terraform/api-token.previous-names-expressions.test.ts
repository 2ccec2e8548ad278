/**
 * previousNames taken from Terraform expressions (here variables) under real Terraform: the writer
 * receives them as one JSON list that Terraform encodes and renames the token the first one names,
 * so a name holding `"` or `\` is one previous name, never broken JSON and never an extra name
 * nobody wrote.
 */
import { TerraformVariable } from "cdktf";

import { ApiToken } from "../../src";
import { describeWithTerraform, oneLine } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "previous-bot", password: "previous-password-41c9" };

describeWithTerraform("ApiToken previousNames from variables, under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });

  const deploy = (stackId: string, previous: string, name: string) =>
    fx.stack(
      (stack) => {
        const old = new TerraformVariable(stack, "old", { type: "string", default: previous });
        new ApiToken(stack, "token", { name, previousNames: [old.stringValue] });
      },
      { stackId, prefix: "gpucloud-previous-expr-" },
    );

  test('a variable holding a","b is one previous name: the token named "b" is left alone', async () => {
    const b = fx.emulator.addToken({ name: "b" });
    const tf = await deploy("quote", 'a","b', "quote-new");
    const apply = await tf.apply();
    expect(apply.stderr).toBe("");
    expect(apply.exitCode).toBe(0);
    expect(fx.emulator.tokens().find((t) => t.id === b.id)?.name).toBe("b");
    expect(fx.named("quote-new")).toHaveLength(1);
    const [created] = fx.named("quote-new");
    expect(created.id).not.toBe(b.id);
    expect(oneLine(apply.stdout)).toContain(`created API token "quote-new" (id ${created.id}) for quote/token`);
    expect((await tf.plan({ check: true, detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a variable holding a backslash names the token to rename", async () => {
    const old = fx.emulator.addToken({ name: "back\\slash" });
    const tf = await deploy("backslash", "back\\slash", "backslash-new");
    const apply = await tf.apply();
    expect(apply.exitCode).toBe(0);
    // A previous name given as an expression: the plan-time read knows the token by its ledger entry alone (none
    // yet), and the writer finds the token by that previous name and renames it.
    expect(oneLine(apply.stdout)).toContain(
      `API token "back\\slash" (id ${old.id}) for backslash/token: renamed "back\\slash" to "backslash-new"`,
    );
    expect(fx.emulator.tokens().find((t) => t.id === old.id)?.name).toBe("backslash-new");
    expect(fx.named("backslash-new")).toHaveLength(1);
    expect((await tf.plan({ check: true, detailedExitCode: true })).exitCode).toBe(0);
  });
});
