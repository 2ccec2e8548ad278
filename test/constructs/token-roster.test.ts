import { TerraformStack, TerraformVariable, Testing } from "cdktf";

import { ApiToken, Flavors, GpuCloudAccount } from "../../src";

function synth(build: (stack: TerraformStack) => void): any {
  const stack = new TerraformStack(Testing.app(), "s");
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

describe("the stack's token roster (synthesis)", () => {
  test("one terraform_data: replaced when ApiTokens come or go (sorted paths), updated in place for names; no ids", () => {
    const json = synth((stack) => {
      const prod = new GpuCloudAccount(stack, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      new ApiToken(stack, "b", { name: "bee", previousNames: ["old-bee"], account: prod });
      new ApiToken(stack, "a", { name: "a-${x}" });
      new ApiToken(stack, "c", { name: new TerraformVariable(stack, "n", { type: "string" }).stringValue });
    });
    const roster = json.resource.terraform_data.gpucloud_token_roster;
    expect(roster.count).toBe(1);
    expect(roster.triggers_replace).toEqual(["s/a", "s/b", "s/c"]);
    // JSON text (a string, so that the state holds no object type beside it), sorted by path. Literal text
    // stays literal; a name that is an expression is interpolated, its value the stack read's `given` local, so
    // that a full apply creates the roster whatever becomes of the tokens' writes (a first apply that failed).
    // No ids: the roster refers to no token's attributes, so a new or drifted token leaves its input known.
    const name = /\$\{jsonencode\(local\.gpucloud-stack-read_given_\w+\["s\/c"\]\.n\)\}/;
    expect(roster.input).toMatch(name);
    expect(roster.input).toContain('"a-$${x}"');
    expect(JSON.parse(roster.input.replace(name, '"<c>"').replace(/\$\$\{/g, "${"))).toEqual({
      "s/a": { name: "a-${x}" },
      "s/b": { name: "bee", env_prefix: "GPUCLOUD_PROD_" },
      "s/c": { name: "<c>" },
    });
    expect(Object.keys(JSON.parse(roster.input.replace(name, '"<c>"')))).toEqual(["s/a", "s/b", "s/c"]);
    expect(roster.input).not.toMatch(/null_resource|\.result/);
    const [provisioner] = roster.provisioner.map((p: any) => p["local-exec"]);
    expect(provisioner.when).toBe("destroy");
    expect(provisioner.command).toMatch(/gpucloud-tf\.js token-roster-release$/);
    expect(provisioner.environment.GPUCLOUD_ROSTER_WAS).toBe('${coalesce(self.input, "null")}');
    // The configuration being applied, as a literal: a destroy-time provisioner may refer to nothing but self.
    expect(JSON.parse(provisioner.environment.GPUCLOUD_ROSTER_NOW.replace(/\$\$\{/g, "${"))).toEqual({
      paths: ["s/a", "s/b", "s/c"],
      names: ["a-${x}", "bee", "old-bee"],
    });
    // A failing lookup of the stack's read fails a full plan here, not the read (see STACK_READ_LOOKUP_ERRORS).
    expect(roster.lifecycle.precondition).toEqual([
      {
        condition: expect.stringContaining('"lookup_errors", "") == ""}'),
        error_message: expect.stringMatching(/^\$\{lookup\(local\.\S+, "lookup_errors", ""\)\}$/),
      },
    ]);
    // Nothing secret, and no token value, reaches it.
    expect(JSON.stringify(roster)).not.toContain('.token"]');
  });

  test("a stack of lookups only has the block, without an instance", () => {
    const json = synth((stack) => void new Flavors(stack, "f", { gpu: "H100" }));
    const roster = json.resource.terraform_data.gpucloud_token_roster;
    expect(roster.count).toBe(0);
    expect(roster.triggers_replace).toEqual([]);
  });
});
