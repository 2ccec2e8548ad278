/**
 * The run's walk of the token list is taken by the apply's provisioners, never at plan time. A
 * stack whose reads after the writes run at plan (a computed name makes every group's read run)
 * once left the walk in the folder at plan; a saved plan's create halves then trusted it, and a
 * token renamed to a managed name between plan and apply was not seen: a second token of that
 * name was created. Found in review of the change that let those reads use the run's walk.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";

import { ApiToken } from "../../src";
import { runFilesIn } from "../support/run-folders";
import type { SynthFolder } from "../support/synth-folder";
import { describeWithTerraform } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "saved-plan-bot", password: "saved-plan-pw-5e19" };

describeWithTerraform("a saved plan and the run's walk", () => {
  const fx = terraformFixture({ users: [USER] });

  /** One ApiToken with a computed name (its group's read runs at every plan) and 25 literal ones, so two groups. */
  const synth = (folder: SynthFolder, withWanted: boolean): string =>
    folder.synth((stack) => {
      const seed = new Resource(stack, "seed", {});
      new ApiToken(stack, "computed", { name: `sp-ci-${seed.id}` });
      for (let i = 0; i < 25; i++) new ApiToken(stack, `t${i}`, { name: `sp-tok-${i}` });
      if (withWanted) new ApiToken(stack, "wanted", { name: "sp-wanted" });
    }).dir;

  test("a token renamed to a managed name between plan and a saved plan's apply is adopted, not created a second time", async () => {
    const folder = fx.folder({ prefix: "gpucloud-saved-plan-" });
    // A temp folder of this test's own, so that the run folder holds this test's runs alone.
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-saved-plan-tmp-"));
    const env = fx.env({ TMPDIR: tmp });
    const first = await fx.init(synth(folder, false), { env });
    await first.apply({ check: true });
    const someoneElses = fx.emulator.addToken({ name: "sp-someone-elses", createdAt: 1_600_000_000 });

    const tf = fx.runner(synth(folder, true), { env });
    const walksBefore = runFilesIn(tmp, ".walk.json");
    const plan = await tf.plan();
    expect(plan.exitCode).toBe(0);
    // The first apply's walk is its run's; the plan adds none.
    expect(runFilesIn(tmp, ".walk.json")).toEqual(walksBefore);

    // Between the plan and its apply, someone renames their token to the name the plan creates.
    const client = fx.client();
    await client.updateToken(someoneElses.id, { name: "sp-wanted" });
    await client.close();
    const applied = await tf.apply({ planFile: plan.planFile, check: true });
    expect(applied.stdout).toMatch(/adopted existing API token "sp-wanted"/);
    expect(fx.named("sp-wanted").map((t) => t.id)).toEqual([someoneElses.id]);
  });
});
