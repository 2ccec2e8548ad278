// A stand-in for the terraform binary that the plan-time read runs (`terraform output -json`), for
// tests that run the scripts outside Terraform, in folders no `terraform init` ever saw.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

let noState: string | undefined;

/** GPUCLOUD_TERRAFORM naming a binary whose `output -json` prints `{}`, as before any apply. */
export function terraformWithoutState(): NodeJS.ProcessEnv {
  if (noState === undefined) {
    noState = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-fake-terraform-")), "terraform");
    writeFileSync(noState, "#!/bin/sh\necho '{}'\n");
    chmodSync(noState, 0o755);
  }
  return { GPUCLOUD_TERRAFORM: noState };
}
