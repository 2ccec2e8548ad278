import * as cdk from "cdktf";
import { type TerraformElement, TerraformStack } from "cdktf";
import type { Construct } from "constructs";

import { LOCAL_PROVIDER } from "./local-provider";
import { ensureLocalProvider } from "./providers";
import { requireTerraformVersion } from "./terraform-version";

/** Terraform 1.10 introduced ephemeral resources; older versions cannot parse the block. */
const EPHEMERAL_MINIMUM_TERRAFORM = "1.10.0";

/** The arguments of an `ephemeral "local_command"` block (hashicorp/local >= 2.7). */
export interface LocalCommandArgs {
  readonly command: string;
  readonly arguments: readonly string[];
  /** Terraform text; may hold `${...}` expressions. */
  readonly stdin: string;
}

/** CDK Terrain's class (0.24); cdktf 0.21 has none. */
type EphemeralResourceClass = new (
  scope: Construct,
  id: string,
  config: { terraformResourceType: string; terraformGeneratorMetadata?: cdk.TerraformProviderGeneratorMetadata },
) => TerraformElement;

/**
 * Declares `ephemeral "local_command"` in the stack and returns its Terraform address
 * (`ephemeral.local_command.<name>`), for expressions written as text.
 *
 * One source serves both flavours: compiled against cdktf, the module imports `cdktn` in the CDK
 * Terrain flavour (scripts/build-cdktn.mjs), where `TerraformEphemeralResource` exists and is
 * used. cdktf 0.21 has no ephemeral class, so there the block is written into the stack's JSON
 * with the stack's `addOverride`, the escape hatch cdktf documents for what it cannot express.
 * Either way the stack's `required_version` asks for Terraform 1.10 (unless the app sets its own),
 * so that an older Terraform stops with a message naming the version needed instead of
 * "Unsupported block type".
 */
export function ephemeralLocalCommand(scope: Construct, id: string, name: string, args: LocalCommandArgs): string {
  ensureLocalProvider(scope);
  const stack = TerraformStack.of(scope);
  requireTerraformVersion(scope, EPHEMERAL_MINIMUM_TERRAFORM);
  const body = { command: args.command, arguments: [...args.arguments], stdin: args.stdin };
  const Ephemeral = (cdk as unknown as { TerraformEphemeralResource?: EphemeralResourceClass }).TerraformEphemeralResource;
  if (Ephemeral) {
    const element = new Ephemeral(scope, id, { terraformResourceType: "local_command", terraformGeneratorMetadata: LOCAL_PROVIDER });
    for (const [key, value] of Object.entries(body)) element.addOverride(key, value);
    return `ephemeral.local_command.${element.friendlyUniqueId}`;
  }
  stack.addOverride(`ephemeral.local_command.${name}`, body);
  return `ephemeral.local_command.${name}`;
}
