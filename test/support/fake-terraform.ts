// A stand-in for the terraform binary that the plan-time read runs (`terraform output -json`), for
// tests that run the scripts outside Terraform, in folders no `terraform init` ever saw.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A stand-in terraform that runs the shell `script`, in a folder of its own; returns its path. */
export function standInTerraform(script: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-fake-terraform-")), "terraform");
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
  return file;
}

let noState: string | undefined;

/** GPUCLOUD_TERRAFORM naming a binary whose `output -json` prints `{}`, as before any apply. */
export function terraformWithoutState(): NodeJS.ProcessEnv {
  noState ??= standInTerraform("echo '{}'");
  return { GPUCLOUD_TERRAFORM: noState };
}
