/**
 * Inputs of any size, with real Terraform: a stack whose names and descriptions together exceed
 * what Linux lets one environment string hold (128 KiB) applies, since the writer takes literal
 * inputs from a file of the stack and only the plan's ids from its environment, and a steady plan
 * follows. GPUCLOUD_TEST_INPUT_TOKENS=5000 runs the size (several minutes: docs/performance.md).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

import { ApiToken } from "../../src";
import { describeWithTerraform } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "inputs-bot", password: "inputs-password-3f1a" };
const TOKENS = Number(process.env.GPUCLOUD_TEST_INPUT_TOKENS ?? 300);
/** The emulator's (and a plausible server's) longest description. */
const DESCRIPTION_LENGTH = 1_000;

describeWithTerraform("the token writer's inputs beyond the environment's limits", () => {
  const fx = terraformFixture({ users: [USER], timeoutSeconds: 600 });

  test(`${TOKENS} tokens with ${DESCRIPTION_LENGTH}-character descriptions: one apply creates every one, the next plan is steady`, async () => {
    const description = (i: number) => `token ${i}: `.padEnd(DESCRIPTION_LENGTH, "é");
    const tf = await fx.stack(
      (stack) => {
        for (let i = 0; i < TOKENS; i++) new ApiToken(stack, `t${i}`, { name: `inputs-${i}`, description: description(i) });
      },
      { prefix: "gpucloud-writer-inputs-", timeoutMs: 600_000 },
    );
    // More than a process environment can hold: the literal inputs travel as the stack's file.
    const assets = path.join(tf.dir, "assets");
    const inputs = readdirSync(assets, { recursive: true, encoding: "utf8" }).find((f) => f.endsWith("writer-inputs.json"))!;
    expect(statSync(path.join(assets, inputs)).size).toBeGreaterThan(TOKENS * DESCRIPTION_LENGTH);
    expect(TOKENS * DESCRIPTION_LENGTH).toBeGreaterThan(128 * 1024);
    const config = JSON.parse(readFileSync(path.join(tf.dir, "cdk.tf.json"), "utf8"));
    const environment = config.resource.null_resource.gpucloud_token_writer.provisioner[0]["local-exec"].environment as Record<
      string,
      string
    >;
    expect(Object.keys(environment).filter((k) => k.startsWith("GPUCLOUD_WRITER_PLANNED_"))).toHaveLength(Math.ceil(TOKENS / 200));

    const applied = await tf.apply({ check: true });
    expect(applied.stdout).toContain(`gpucloud: ${TOKENS} of ${TOKENS} tokens written`);
    const tokens = fx.emulator.tokens();
    for (const i of [0, 1, TOKENS / 2, TOKENS - 1]) {
      expect(tokens.filter((t) => t.name === `inputs-${i}`)).toEqual([expect.objectContaining({ description: description(i) })]);
    }
    expect(tokens.filter((t) => t.name.startsWith("inputs-"))).toHaveLength(TOKENS);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  }, 900_000);
});
