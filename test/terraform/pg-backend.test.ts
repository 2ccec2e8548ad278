/**
 * ApiToken with its state in a real remote backend, Terraform's `pg` backend on a PostgreSQL
 * server of the suite's own: a pipeline job checks out afresh, synthesizes, inits and runs,
 * nothing kept from the job before but the backend's state (no stack folder, no
 * .gpucloud-handoff/, no temp folder). The second job's plan of the same stack changes nothing
 * and the API holds one token; two workspaces on one database keep two states; a job whose apply
 * failed for one token is converged by the next job.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { TerraformOutput, type TerraformStack } from "cdktf";

import { ApiToken } from "../../src";
import { describeWithTerraformAndPostgres, freePort, pgBackend, postgresFixture, startPostgres } from "../support/postgres";
import { expectSteadyPlan } from "../support/steady-plan";
import { oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "pg-pipeline-bot", password: "pg-pipeline-password-5c1a" };

describeWithTerraformAndPostgres("ApiToken on the pg backend: a fresh checkout per job, the state in PostgreSQL", () => {
  const fx = terraformFixture({ users: [USER] });
  const pg = postgresFixture();

  const tokenStack = (name: string) => (stack: TerraformStack) => {
    const token = new ApiToken(stack, "ci", { name });
    new TerraformOutput(stack, "token_id", { value: token.tokenId });
  };

  /** One pipeline job: a fresh folder synthesized afresh, a temp folder of its own, `terraform init`. */
  const job = (connStr: string, name: string): Promise<TerraformRunner> => {
    const folder = fx.folder({ prefix: "gpucloud-pg-job-", backend: pgBackend(connStr) }).synth(tokenStack(name));
    const jobTmp = mkdtempSync(path.join(tmpdir(), "gpucloud-pg-job-tmp-"));
    return fx.init(folder.dir, { env: fx.env({ TMPDIR: jobTmp }), timeoutMs: 120_000 });
  };
  const tokenId = async (tf: TerraformRunner) => (await tf.output()).token_id.value;
  const workspaces = (db: string) => pg.query(db, "SELECT name FROM terraform_remote_state.states ORDER BY name");

  test("job 2, a fresh folder and temp folder on the same database, plans no change; one token", async () => {
    const connStr = await pg.createDatabase("jobs");
    const first = await job(connStr, "pg-job");
    await first.apply({ check: true });
    const [token] = fx.named("pg-job");
    expect(await tokenId(first)).toBe(token.id);
    // The state went to PostgreSQL, not into the folder.
    expect(existsSync(path.join(first.dir, "terraform.tfstate"))).toBe(false);
    expect(await workspaces("jobs")).toEqual(["default"]);

    const second = await job(connStr, "pg-job");
    expect(second.dir).not.toBe(first.dir);
    expect(await tokenId(second)).toBe(token.id);
    await expectSteadyPlan(second);
    expect(fx.named("pg-job")).toEqual([expect.objectContaining({ id: token.id, token: token.token })]);
  });

  test("two workspaces on one database keep two states; a later fresh folder of one plans no change", async () => {
    const connStr = await pg.createDatabase("workspaces");
    const blue = await job(connStr, "pg-ws-blue");
    blue.newWorkspace("blue");
    await blue.apply({ check: true });
    const green = await job(connStr, "pg-ws-green");
    green.newWorkspace("green");
    await green.apply({ check: true });

    const [blueToken] = fx.named("pg-ws-blue");
    const [greenToken] = fx.named("pg-ws-green");
    expect(await tokenId(blue)).toBe(blueToken.id);
    expect(await tokenId(green)).toBe(greenToken.id);
    expect(blueToken.id).not.toBe(greenToken.id);
    // One row per workspace that has a state; the default workspace was never applied.
    expect(await workspaces("workspaces")).toEqual(["blue", "green"]);

    // A later job of blue: a fresh folder that selects the workspace as a pipeline does, by TF_WORKSPACE.
    const later = fx.folder({ prefix: "gpucloud-pg-job-", backend: pgBackend(connStr) }).synth(tokenStack("pg-ws-blue"));
    const again = await fx.init(later.dir, { env: fx.env({ TF_WORKSPACE: "blue" }), timeoutMs: 120_000 });
    expect(await tokenId(again)).toBe(blueToken.id);
    await expectSteadyPlan(again);
    expect(fx.named("pg-ws-blue")).toHaveLength(1);
    expect(fx.named("pg-ws-green")).toHaveLength(1);
  });

  test("a job whose apply failed for one token (revoked between its plan and apply): the next job, on a fresh checkout, converges", async () => {
    const connStr = await pg.createDatabase("failed");
    const twoTokens = (description: string) => (stack: TerraformStack) => {
      new ApiToken(stack, "kept", { name: "pg-kept", description });
      new ApiToken(stack, "gone", { name: "pg-gone", description });
    };
    const jobOf = (build: (stack: TerraformStack) => void) => {
      const folder = fx.folder({ prefix: "gpucloud-pg-job-", backend: pgBackend(connStr) }).synth(build);
      const jobTmp = mkdtempSync(path.join(tmpdir(), "gpucloud-pg-job-tmp-"));
      return fx.init(folder.dir, { env: fx.env({ TMPDIR: jobTmp }), timeoutMs: 120_000 });
    };
    await (await jobOf(twoTokens("v1"))).apply({ check: true });
    const [kept] = fx.named("pg-kept");
    const [gone] = fx.named("pg-gone");

    // Job 2 plans a description change of both; one token is revoked in the console before its apply.
    const second = await jobOf(twoTokens("v2"));
    const plan = await second.plan({ check: true });
    fx.emulator.deleteToken(gone.id);
    const failed = await second.apply({ planFile: plan.planFile });
    expect(failed.exitCode).toBe(1);
    const said = oneLine(failed.stderr);
    expect(said).toContain("1 of 2 API tokens were not written (every other one was)");
    expect(said).toContain(`s/gone ("pg-gone"): the plan showed API token id ${gone.id}`);
    expect(said).toContain("run terraform plan again");
    // Every other write was made.
    expect(fx.named("pg-kept")).toEqual([expect.objectContaining({ id: kept.id, description: "v2" })]);

    // Job 3: a fresh folder and temp folder, nothing kept but the state in PostgreSQL.
    const third = await jobOf(twoTokens("v2"));
    const replan = await third.plan({ check: true });
    expect(oneLine(replan.stdout)).toContain("null_resource.gpucloud_token_writer is tainted, so must be replaced");
    await third.apply({ check: true, planFile: replan.planFile });
    expect(fx.named("pg-kept")).toEqual([expect.objectContaining({ id: kept.id, description: "v2" })]);
    expect(fx.named("pg-gone")).toEqual([expect.objectContaining({ description: "v2" })]);
    expect(fx.named("pg-gone")[0].id).not.toBe(gone.id);
    await expectSteadyPlan(third);
  });

  test("the fixture: a port taken between its pick and the server's start is given up for another; stop removes the data", async () => {
    // Two test runs on one machine can pick the same free port at once: here the first pick is the suite's server's own.
    let picks = 0;
    const other = await startPostgres({ pickPort: () => (++picks === 1 ? Promise.resolve(pg.server.port) : freePort()) });
    try {
      expect(picks).toBe(2);
      expect(other.port).not.toBe(pg.server.port);
      expect(await other.createDatabase("other")).toBe(`postgres://postgres@127.0.0.1:${other.port}/other?sslmode=disable`);
      expect(await other.query("other", "SELECT current_database()")).toEqual(["other"]);
    } finally {
      await other.stop();
    }
    expect(existsSync(other.dataDir)).toBe(false);
    expect(await pg.query("postgres", "SELECT 1")).toEqual(["1"]);
  });
});
