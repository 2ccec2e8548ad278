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

/**
 * A stand-in script that answers as Terraform 1.11 does before any apply: `output -json <name>`
 * fails (no such output), `state list` fails with "No state file was found!".
 */
export const NO_STATE_SCRIPT =
  `case "$1" in output) echo 'Error: Output "gpucloud_token_ledger" not found' >&2; exit 1;; ` +
  `state) echo 'No state file was found!' >&2; exit 1;; esac; exit 3`;

/** GPUCLOUD_TERRAFORM naming a binary that answers as before any apply (NO_STATE_SCRIPT). */
export function terraformWithoutState(): NodeJS.ProcessEnv {
  noState ??= standInTerraform(NO_STATE_SCRIPT);
  return { GPUCLOUD_TERRAFORM: noState };
}
