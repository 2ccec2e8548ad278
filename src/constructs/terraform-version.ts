import { TerraformElement, TerraformStack } from "cdktf";
import type { Construct } from "constructs";

/** The construct id of a stack's requirement, found again as the stack's child. */
const REQUIREMENT_ID = "gpucloud-terraform-version";

/** -1, 0 or 1, comparing dotted version numbers ("1.5.0" < "1.10.0"). */
function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * The stack's `terraform.required_version` as the library asks for it: the highest minimum its
 * constructs need. An element's `terraform` fragment is merged into the stack's configuration
 * before the stack's overrides, so an app that sets `terraform.required_version` itself
 * (`stack.addOverride`) replaces this one, whether it does so before or after the constructs.
 */
class TerraformVersionRequirement extends TerraformElement {
  /** The highest minimum asked for, e.g. "1.10.0". */
  minimum: string;

  constructor(scope: Construct, id: string, minimum: string) {
    super(scope, id);
    this.minimum = minimum;
  }

  override toTerraform(): { terraform: { required_version: string } } {
    return { terraform: { required_version: `>= ${this.minimum}` } };
  }

  override toHclTerraform(): { terraform: { required_version: string } } {
    return this.toTerraform();
  }
}

/**
 * Makes the stack require Terraform >= `minimum` (e.g. "1.5.0" for a `check` block), so that an
 * older Terraform stops at `init` naming the version needed rather than at an unknown block. A
 * `required_version` the app sets itself replaces it: the app must then ask for this minimum too
 * (README, "Install").
 */
export function requireTerraformVersion(scope: Construct, minimum: string): void {
  const stack = TerraformStack.of(scope);
  const existing = stack.node.tryFindChild(REQUIREMENT_ID);
  if (existing instanceof TerraformVersionRequirement) {
    if (compareVersions(minimum, existing.minimum) > 0) existing.minimum = minimum;
    return;
  }
  new TerraformVersionRequirement(stack, REQUIREMENT_ID, minimum);
}
