// One pipeline job as most CI runs it: a fresh checkout synthesized afresh, the state in a remote
// backend (Terraform's pg backend on the suite's PostgreSQL), a temp folder of its own.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import type { TerraformStack } from "cdktf";

import type { RunningEmulator } from "../../src/emulator";
import type { TestAccount } from "./api-credentials";
import { pgBackend } from "./postgres";
import type { TerraformRunner } from "./terraform";
import type { TerraformFixture } from "./terraform-fixture";

/** Whose variables a job has: one environment's user on its API. */
export interface JobVariables {
  readonly api: RunningEmulator;
  readonly user: TestAccount;
}

/**
 * A job on database `connStr`: the stack `build` makes, synthesized into a fresh folder, with the
 * whole set of `vars`' variables (`over` on top; with an API token, the password's are not set at
 * all), initialized.
 */
export function pipelineJob(
  fx: TerraformFixture,
  connStr: string,
  build: (stack: TerraformStack) => void,
  vars: JobVariables,
  over: NodeJS.ProcessEnv = {},
): Promise<TerraformRunner> {
  const folder = fx.folder({ prefix: "gpucloud-job-", backend: pgBackend(connStr) }).synth(build);
  const env = fx.env({ TMPDIR: mkdtempSync(path.join(tmpdir(), "gpucloud-job-tmp-")), ...over }, vars.user, vars.api);
  if (over.GPUCLOUD_API_TOKEN !== undefined) for (const name of ["GPUCLOUD_USERNAME", "GPUCLOUD_PASSWORD"]) delete env[name];
  return fx.init(folder.dir, { env, timeoutMs: 120_000 });
}
