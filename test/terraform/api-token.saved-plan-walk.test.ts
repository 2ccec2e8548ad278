/**
 * The run's walk of the token list is taken by the apply's provisioners, never at plan time. A
 * stack whose reads after the writes run at plan (a computed name makes every group's read run)
 * once left the walk in the folder at plan; a saved plan's create halves then trusted it, and a
 * token renamed to a managed name between plan and apply was not seen: a second token of that
 * name was created. Found in review of the change that let those reads use the run's walk.
 */
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { App, LocalBackend, TerraformStack } from "cdktf";

import { ApiToken } from "../../src";
import { ApiClient } from "../../src/client/client";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { runFolderPath } from "../../src/runtime/run/run-folder";
import { credentialsEnv } from "../support/api-credentials";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  TerraformRunner,
} from "../support/terraform";

const USER = { username: "saved-plan-bot", password: "saved-plan-pw-5e19" };

describeWithTerraform("a saved plan and the run's walk", () => {
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

  /** One ApiToken with a computed name (its group's read runs at every plan) and 25 literal ones, so two groups. */
  const synth = (outdir: string, withWanted: boolean): string => {
    const app = new App({ outdir });
    const stack = new TerraformStack(app, "s");
    new LocalBackend(stack, { path: "terraform.tfstate" });
    const seed = new Resource(stack, "seed", {});
    new ApiToken(stack, "computed", { name: `sp-ci-${seed.id}` });
    for (let i = 0; i < 25; i++) new ApiToken(stack, `t${i}`, { name: `sp-tok-${i}` });
    if (withWanted) new ApiToken(stack, "wanted", { name: "sp-wanted" });
    app.synth();
    return path.join(outdir, "stacks", "s");
  };

  test("a token renamed to a managed name between plan and a saved plan's apply is adopted, not created a second time", async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-saved-plan-"));
    // A temp folder of this test's own, so that the run folder holds this test's runs alone.
    const env = { ...credentialsEnv(emulator, USER), TMPDIR: mkdtempSync(path.join(tmpdir(), "gpucloud-saved-plan-tmp-")) };
    const first = new TerraformRunner(synth(outdir, false), { doubles, env });
    await first.init({ check: true });
    await first.apply({ check: true });
    const someoneElses = emulator.addToken({ name: "sp-someone-elses", createdAt: 1_600_000_000 });

    const tf = new TerraformRunner(synth(outdir, true), { doubles, env });
    const plan = await tf.plan();
    expect(plan.exitCode).toBe(0);
    const runFolder = runFolderPath(env);
    const walks = existsSync(runFolder) ? readdirSync(runFolder).filter((f) => f.endsWith(".walk.json")) : [];
    expect(walks).toEqual([]);

    // Between the plan and its apply, someone renames their token to the name the plan creates.
    const client = new ApiClient({ baseUrl: emulator.url, credentials: { ...USER }, totalTimeoutMs: 10_000 }, openNodeHttpSender);
    await client.updateToken(someoneElses.id, { name: "sp-wanted" });
    await client.close();
    const applied = await tf.apply({ planFile: plan.planFile, check: true });
    expect(applied.stdout).toMatch(/adopted existing API token "sp-wanted"/);
    expect(
      emulator
        .tokens()
        .filter((t) => t.name === "sp-wanted")
        .map((t) => t.id),
    ).toEqual([someoneElses.id]);
  });
});
