// Real Terraform against the hashicorp/local double's ephemeral local_command, with hand-written
// main.tf.json files: what Terraform does with it (opened at plan and at apply, not at all while
// its configuration is unknown, never stored) and how its errors reach the user.
import { readFileSync } from "node:fs";
import path from "node:path";

import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  makeTempDir,
  oneLine,
  type ProviderDoubles,
  removeTempDirs,
  startProviderDoubles,
  TerraformRunner,
  writeTerraformJson,
} from "../support/terraform";

const TERRAFORM = {
  required_version: ">= 1.10.0",
  required_providers: { null: { source: "hashicorp/null", version: "~> 3.2" }, local: { source: "hashicorp/local", version: ">= 2.7.0" } },
};
const SECRET = "s3cr3t-from-the-environment-4f9a";
// Prints an environment variable of Terraform's (local_command passes the whole environment).
const PRINT_ENV = "process.stdout.write(process.env.LOCAL_DOUBLE_SECRET)";

describeWithTerraform("hashicorp/local's ephemeral local_command double under real Terraform", () => {
  let doubles: ProviderDoubles;
  const env = { ...process.env, LOCAL_DOUBLE_SECRET: SECRET };

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    doubles = await startProviderDoubles({ env });
  });
  afterAll(async () => {
    await doubles?.stop();
    removeTempDirs();
  });

  function stack(config: object): TerraformRunner {
    const dir = writeTerraformJson(makeTempDir("tf-local-double-"), { terraform: TERRAFORM, ...config });
    return new TerraformRunner(dir, { doubles, env });
  }

  test("opened at plan and at apply, its stdout reaches a provisioner's environment, and no state or plan holds it", async () => {
    const tf = stack({
      ephemeral: { local_command: { secret: { command: "node", arguments: ["-e", PRINT_ENV] } } },
      resource: {
        null_resource: {
          consumer: {
            provisioner: [
              {
                "local-exec": { command: 'printf %s "$V" > consumed.txt', environment: { V: "${ephemeral.local_command.secret.stdout}" } },
              },
            ],
          },
        },
      },
    });
    await tf.init({ check: true });
    const planned = await tf.plan({ check: true });
    expect(planned.stdout).toMatch(/ephemeral\.local_command\.secret: Opening\.\.\.[\s\S]*ephemeral\.local_command\.secret: Closing\.\.\./);
    expect(JSON.stringify(planned.plan)).not.toContain(SECRET);
    expect(readFileSync(planned.planFile).toString("latin1")).not.toContain(SECRET);
    const applied = await tf.apply({ check: true, planFile: planned.planFile });
    expect(applied.stdout).toMatch(/ephemeral\.local_command\.secret: Opening\.\.\./);
    expect(applied.stdout).toMatch(/\(output suppressed due to ephemeral value in config\)/);
    expect(readFileSync(path.join(tf.dir, "consumed.txt"), "utf8")).toBe(SECRET);
    expect(readFileSync(path.join(tf.dir, "terraform.tfstate"), "utf8")).not.toContain(SECRET);
    expect(applied.stdout + applied.stderr + planned.stdout + planned.stderr).not.toContain(SECRET);
  });

  test("a configuration unknown at plan is opened only at apply", async () => {
    const tf = stack({
      resource: { null_resource: { first: {} } },
      ephemeral: {
        local_command: { later: { command: "node", arguments: ["-e", "process.stdout.write('ok')", "${null_resource.first.id}"] } },
      },
      locals: { used: "${ephemeral.local_command.later.stdout}" },
    });
    await tf.init({ check: true });
    const planned = await tf.plan({ check: true });
    expect(planned.stdout).not.toMatch(/ephemeral\.local_command\.later: Opening/);
    const applied = await tf.apply({ check: true, planFile: planned.planFile });
    expect(applied.stdout).toMatch(/ephemeral\.local_command\.later: Opening\.\.\./);
  });

  test("a non-zero exit fails the plan with the provider's diagnostic, stderr included", async () => {
    const tf = stack({
      ephemeral: {
        local_command: { failing: { command: "node", arguments: ["-e", "process.stderr.write('no such token');process.exit(2)"] } },
      },
      locals: { used: "${ephemeral.local_command.failing.stdout}" },
    });
    await tf.init({ check: true });
    const planned = await tf.plan();
    expect(planned.exitCode).toBe(1);
    const text = oneLine(planned.stderr);
    expect(text).toMatch(/Error: Command Execution Failed/);
    expect(text).toMatch(/with ephemeral\.local_command\.failing/);
    expect(text).toMatch(/Command Error: no such token State: exit status 2/);
  });

  test("an ephemeral value in a managed resource's ordinary argument is refused by Terraform", async () => {
    const tf = stack({
      ephemeral: { local_command: { secret: { command: "node", arguments: ["-e", PRINT_ENV] } } },
      resource: { null_resource: { copy: { triggers: { v: "${ephemeral.local_command.secret.stdout}" } } } },
    });
    await tf.init({ check: true });
    const planned = await tf.plan();
    expect(planned.exitCode).toBe(1);
    expect(oneLine(planned.stderr)).toMatch(/Invalid use of ephemeral value|Ephemeral value not allowed/);
    expect(planned.stderr + planned.stdout).not.toContain(SECRET);
  });
});
