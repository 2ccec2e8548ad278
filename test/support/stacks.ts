// A one-stack cdktf app synthesized into a fresh folder and initialized, as the Terraform suites
// need it again and again.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformStack } from "cdktf";

import { type ProviderDoubles, TerraformRunner } from "./terraform";

export interface SynthesizedStackOptions {
  readonly doubles: ProviderDoubles;
  /** Terraform's whole environment (credentials included). */
  readonly env: NodeJS.ProcessEnv;
  /** Prefix of the temp folder. */
  readonly prefix?: string;
}

/**
 * Stack "s", its state in the stack folder (cdktf's default local backend path is absolute),
 * built by `build`, synthesized into a fresh temp folder; `terraform init` has run.
 */
export async function synthesizedStack(build: (stack: TerraformStack) => void, opts: SynthesizedStackOptions): Promise<TerraformRunner> {
  const outdir = mkdtempSync(path.join(tmpdir(), opts.prefix ?? "gpucloud-tf-"));
  const app = new App({ outdir });
  const stack = new TerraformStack(app, "s");
  new LocalBackend(stack, { path: "terraform.tfstate" });
  build(stack);
  app.synth();
  const tf = new TerraformRunner(path.join(outdir, "stacks", "s"), { doubles: opts.doubles, env: opts.env });
  await tf.init({ check: true });
  return tf;
}
