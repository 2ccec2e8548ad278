import { Aspects, TerraformStack } from "cdktf";
import type { Construct } from "constructs";

/** The stacks whose `required_version` this library adds to, with the highest minimum asked for. */
const minimums = new WeakMap<TerraformStack, { version: string }>();

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
 * The constraint the app set itself with `stack.addOverride("terraform.required_version", ...)`. cdktf and
 * cdktn keep a stack's overrides in a field they do not export (`rawOverrides`); read defensively, since
 * without it the app's constraint would be overwritten rather than kept.
 */
function appConstraint(stack: TerraformStack): string | undefined {
  const raw = (stack as unknown as { rawOverrides?: { terraform?: { required_version?: unknown } } }).rawOverrides;
  const value = raw?.terraform?.required_version;
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * Makes the stack require Terraform >= `minimum` (e.g. "1.5.0" for a `check` block), keeping the
 * app's own `required_version` constraint beside it: Terraform then checks both. Merged when the
 * stack is synthesized (an aspect), so it does not matter whether the app sets its constraint
 * before or after the constructs that need a version.
 */
export function requireTerraformVersion(scope: Construct, minimum: string): void {
  const stack = TerraformStack.of(scope);
  const known = minimums.get(stack);
  if (known) {
    if (compareVersions(minimum, known.version) > 0) known.version = minimum;
    return;
  }
  const state = { version: minimum };
  minimums.set(stack, state);
  Aspects.of(stack).add({
    visit: (node) => {
      if (node !== stack) return;
      const ours = `>= ${state.version}`;
      const app = appConstraint(stack);
      // A second synthesis finds the merged value: ours is already part of it.
      const merged =
        app === undefined || app === ours
          ? ours
          : app
                .split(",")
                .map((c) => c.trim())
                .includes(ours)
            ? app
            : `${app}, ${ours}`;
      stack.addOverride("terraform.required_version", merged);
    },
  });
}
