// A cdktf app's output folder for one stack, synthesized again before each step as `cdktf synth`
// does before each deploy, as the Terraform suites need it again and again.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformStack } from "cdktf";

export interface SynthFolderOptions {
  /** Prefix of the temp folder (default "gpucloud-tf-"). */
  readonly prefix?: string;
  /** The stack's id, which Terraform's messages name constructs by (default "s"). */
  readonly stackId?: string;
  /** The App's context (CDK Terrain reads `targetVersions` from it). */
  readonly context?: Record<string, unknown>;
}

export class SynthFolder {
  /** The app's outdir, a fresh temp folder. */
  readonly outdir: string;
  readonly stackId: string;
  private readonly context?: Record<string, unknown>;

  constructor(opts: SynthFolderOptions = {}) {
    this.outdir = mkdtempSync(path.join(tmpdir(), opts.prefix ?? "gpucloud-tf-"));
    this.stackId = opts.stackId ?? "s";
    this.context = opts.context;
  }

  /** The stack folder Terraform runs in. */
  get dir(): string {
    return path.join(this.outdir, "stacks", this.stackId);
  }

  /**
   * Synthesizes the stack, its state in the stack folder (cdktf's default local backend path is
   * absolute), built by `build`.
   */
  synth(build: (stack: TerraformStack) => void): this {
    return this.synthApp((app) => {
      const stack = new TerraformStack(app, this.stackId);
      new LocalBackend(stack, { path: "terraform.tfstate" });
      build(stack);
    });
  }

  /** Synthesizes an app whose stack `build` makes itself (under the id `stackId`), e.g. the example's. */
  synthApp(build: (app: App) => void): this {
    const app = new App({ outdir: this.outdir, ...(this.context && { context: this.context }) });
    build(app);
    app.synth();
    return this;
  }
}
