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
  /**
   * Declares the stack's backend on each synth (default: LocalBackend, the state in the stack
   * folder), e.g. pgBackend(connStr) of test/support/postgres.ts for state another folder sees.
   */
  readonly backend?: (stack: TerraformStack) => void;
}

export class SynthFolder {
  /** The app's outdir, a fresh temp folder. */
  readonly outdir: string;
  readonly stackId: string;
  private readonly context?: Record<string, unknown>;
  private readonly backend: (stack: TerraformStack) => void;

  constructor(opts: SynthFolderOptions = {}) {
    this.outdir = mkdtempSync(path.join(tmpdir(), opts.prefix ?? "gpucloud-tf-"));
    this.stackId = opts.stackId ?? "s";
    this.context = opts.context;
    this.backend = opts.backend ?? ((stack) => new LocalBackend(stack, { path: "terraform.tfstate" }));
  }

  /** The stack folder Terraform runs in. */
  get dir(): string {
    return path.join(this.outdir, "stacks", this.stackId);
  }

  /**
   * Synthesizes the stack, built by `build`, with the folder's backend: by default its state in
   * the stack folder (cdktf's default local backend path is absolute).
   */
  synth(build: (stack: TerraformStack) => void): this {
    return this.synthApp((app) => {
      const stack = new TerraformStack(app, this.stackId);
      this.backend(stack);
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
