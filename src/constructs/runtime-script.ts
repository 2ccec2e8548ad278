import { existsSync } from "node:fs";
import * as path from "node:path";

import { AssetType, TerraformAsset, TerraformStack } from "cdktf";
import type { Construct } from "constructs";

import type { RuntimeCommandName } from "../protocol";

/**
 * The folder of the bundled script (lib/assets: the launcher gpucloud-tf.js, the script proper
 * gpucloud-tf-main.js, and a package.json that keeps both CommonJS under a project with
 * "type": "module"), resolved from the package root so that
 * it is found both from the compiled `lib/constructs` and from the TypeScript sources in
 * `src/constructs`.
 */
const RUNTIME_ASSET_SOURCE = path.resolve(__dirname, "..", "..", "lib", "assets");
/** The file Terraform starts, inside that folder. */
const RUNTIME_ENTRY = "gpucloud-tf.js";
/** What the build must have put there. */
const RUNTIME_FILES = [RUNTIME_ENTRY, "gpucloud-tf-main.js", "package.json"];

const ASSET_ID = "gpucloud-runtime";

/**
 * The script's path relative to the stack folder. One asset per stack, shared by every construct
 * of this library in it, so the synthesized folder carries one copy and stays self-contained:
 * it can be planned and applied after being moved or copied to another machine.
 */
export function runtimeScriptPath(scope: Construct): string {
  const stack = TerraformStack.of(scope);
  const existing = stack.node.tryFindChild(ASSET_ID);
  if (existing instanceof TerraformAsset) return path.posix.join(existing.path, RUNTIME_ENTRY);
  const missing = RUNTIME_FILES.filter((file) => !existsSync(path.join(RUNTIME_ASSET_SOURCE, file)));
  if (missing.length > 0) {
    throw new Error(
      `cdktf-gpucloud: the runtime script is incomplete (${missing.join(", ")} missing in ${RUNTIME_ASSET_SOURCE}); ` +
        `the package was not built (run "npm run build" in it)`,
    );
  }
  const asset = new TerraformAsset(stack, ASSET_ID, { path: RUNTIME_ASSET_SOURCE, type: AssetType.DIRECTORY });
  return path.posix.join(asset.path, RUNTIME_ENTRY);
}

/**
 * `program` of an external data source. Relative to Terraform's working directory (the stack
 * folder), which the external provider inherits; an absolute path would tie a saved plan to
 * the folder it was made in.
 */
export function externalProgram(scope: Construct, command: RuntimeCommandName): string[] {
  return ["node", `./${runtimeScriptPath(scope)}`, command];
}

/** `command` of a local-exec provisioner (run by `/bin/sh -c` in the stack folder). */
export function provisionerCommand(scope: Construct, command: RuntimeCommandName): string {
  return `node ./${runtimeScriptPath(scope)} ${command}`;
}
