/**
 * A saved plan is applied later: the writer decides every create on its own walk and reads at
 * apply, never on what the plan saw. A token renamed to a managed name between the plan and the
 * apply is adopted, not created a second time. The stack has a token whose name is an expression
 * (known only at apply; every read after the writes runs then) beside literal ones, as the case
 * was first found with (the old design left its run's walk at plan time, and a saved plan's
 * create halves trusted it).
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";

import { ApiToken } from "../../src";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform, oneLine } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "saved-plan-bot", password: "saved-plan-pw-5e19" };

describeWithTerraform("a saved plan and what the writer reads at apply", () => {
  const fx = terraformFixture({ users: [USER] });

  /** One ApiToken with a computed name and 25 literal ones; `wanted` adds one more. */
  const synth = (folder: SynthFolder, withWanted: boolean): string =>
    folder.synth((stack) => {
      const seed = new Resource(stack, "seed", {});
      new ApiToken(stack, "computed", { name: `sp-ci-${seed.id}` });
      for (let i = 0; i < 25; i++) new ApiToken(stack, `t${i}`, { name: `sp-tok-${i}` });
      if (withWanted) new ApiToken(stack, "wanted", { name: "sp-wanted" });
    }).dir;

  test("a token renamed to a managed name between plan and a saved plan's apply is adopted, not created a second time", async () => {
    const folder = fx.folder({ prefix: "gpucloud-saved-plan-" });
    // A temp folder of this test's own: the run leaves nothing in it.
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-saved-plan-tmp-"));
    const env = fx.env({ TMPDIR: tmp });
    const first = await fx.init(synth(folder, false), { env });
    await first.apply({ check: true });
    const someoneElses = fx.emulator.addToken({ name: "sp-someone-elses", createdAt: 1_600_000_000 });
    const count = fx.emulator.tokens().length;

    const tf = fx.runner(synth(folder, true), { env });
    const plan = await tf.plan();
    expect(plan.exitCode).toBe(0);
    expect(oneLine(plan.stdout)).toMatch(/\+ "s\/wanted\.name" += "sp-wanted"/);

    // Between the plan and its apply, someone renames their token to the name the plan creates.
    const client = fx.client();
    await client.updateToken(someoneElses.id, { name: "sp-wanted" });
    await client.close();
    const postsBefore = fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0;
    const applied = oneLine((await tf.apply({ planFile: plan.planFile, check: true })).stdout);
    expect(applied).toContain(`adopted existing API token "sp-wanted" (id ${someoneElses.id}) for s/wanted: no change`);
    expect(applied).not.toContain('created API token "sp-wanted"');
    expect(fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0).toBe(postsBefore);
    expect(fx.named("sp-wanted").map((t) => t.id)).toEqual([someoneElses.id]);
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect(readdirSync(tmp).filter((f) => f.includes("gpucloud"))).toEqual([]);
  });
});
