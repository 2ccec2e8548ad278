import { existsSync } from "node:fs";
import * as path from "node:path";
import { AssetType, TerraformAsset, TerraformStack } from "cdktf";
import type { Construct } from "constructs";
import type { RuntimeCommandName } from "../runtime/protocol";

/**
 * The bundled script, resolved from the package root so that it is found both from the compiled
 * `lib/constructs` and from the TypeScript sources in `src/constructs`.
 */
export const RUNTIME_SCRIPT_SOURCE = path.resolve(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");

const ASSET_ID = "gpucloud-runtime";

/**
 * The script's path relative to the stack folder. One asset per stack, shared by every construct
 * of this library in it, so the synthesized folder carries one copy and stays self-contained:
 * it can be planned and applied after being moved or copied to another machine.
 */
export function runtimeScriptPath(scope: Construct): string {
  const stack = TerraformStack.of(scope);
  const existing = stack.node.tryFindChild(ASSET_ID);
  if (existing instanceof TerraformAsset) return existing.path;
  if (!existsSync(RUNTIME_SCRIPT_SOURCE)) {
    throw new Error(
      `cdktf-gpucloud: the runtime script ${RUNTIME_SCRIPT_SOURCE} is missing; ` +
        `the package was not built (run "npm run build" in it)`,
    );
  }
  return new TerraformAsset(stack, ASSET_ID, { path: RUNTIME_SCRIPT_SOURCE, type: AssetType.FILE }).path;
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
