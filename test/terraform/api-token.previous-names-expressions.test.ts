/**
 * previousNames taken from Terraform expressions (here variables) under real Terraform: the
 * provisioner receives them as one JSON array that Terraform encodes, so a name holding `"` or
 * `\` is one previous name, never broken JSON and never an extra name nobody wrote.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformStack, TerraformVariable } from "cdktf";

import { ApiToken } from "../../src";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  TerraformRunner,
} from "../support/terraform";

const USER = { username: "previous-bot", password: "previous-password-41c9" };

describeWithTerraform("ApiToken previousNames from variables, under real Terraform", () => {
  let emulator: RunningEmulator;
  let doubles: ProviderDoubles;

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    emulator = await startEmulator({ users: [USER] });
    doubles = await startProviderDoubles();
  });
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
  });

  async function deploy(stackId: string, previous: string, name: string): Promise<TerraformRunner> {
    const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-previous-expr-"));
    const app = new App({ outdir });
    const stack = new TerraformStack(app, stackId);
    new LocalBackend(stack, { path: "terraform.tfstate" });
    const old = new TerraformVariable(stack, "old", { type: "string", default: previous });
    new ApiToken(stack, "token", { name, previousNames: [old.stringValue] });
    app.synth();
    const tf = new TerraformRunner(path.join(outdir, "stacks", stackId), { doubles, env: credentialsEnv(emulator, USER) });
    await tf.init({ check: true });
    return tf;
  }

  test('a variable holding a","b is one previous name: the token named "b" is left alone', async () => {
    const b = emulator.addToken({ name: "b" });
    const tf = await deploy("quote", 'a","b', "quote-new");
    const apply = await tf.apply();
    expect(apply.stderr).toBe("");
    expect(apply.exitCode).toBe(0);
    expect(emulator.tokens().find((t) => t.id === b.id)?.name).toBe("b");
    expect(emulator.tokens().filter((t) => t.name === "quote-new")).toHaveLength(1);
    expect((await tf.plan({ check: true, detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a variable holding a backslash names the token to rename", async () => {
    const old = emulator.addToken({ name: "back\\slash" });
    const tf = await deploy("backslash", "back\\slash", "backslash-new");
    const apply = await tf.apply();
    expect(apply.exitCode).toBe(0);
    expect(apply.stdout).toContain("a previous name");
    expect(emulator.tokens().find((t) => t.id === old.id)?.name).toBe("backslash-new");
    expect(emulator.tokens().filter((t) => t.name === "backslash-new")).toHaveLength(1);
    expect((await tf.plan({ check: true, detailedExitCode: true })).exitCode).toBe(0);
  });
});
