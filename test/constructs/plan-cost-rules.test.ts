/**
 * Rules a change to the constructs could break without any other test noticing, each with its
 * reason in the failure message (CONTRIBUTING.md, "Rules of the house"). They are about what every
 * plan pays per ApiToken: Terraform parses every string of the configuration, and copies the state
 * (the stack read's result among it) for every output it plans (docs/performance.md).
 */
import { TerraformOutput, TerraformStack, Testing } from "cdktf";

import { ApiToken } from "../../src";

/** Fails with the rule and its reason, not a bare difference. */
function rule(holds: boolean, text: string): void {
  if (!holds) throw new Error(`house rule broken: ${text}`);
}

function synth(build: (stack: TerraformStack) => void): any {
  const stack = new TerraformStack(Testing.app(), "s");
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

const json = synth((stack) => {
  for (let i = 0; i < 3; i++) {
    const token = new ApiToken(stack, `t${i}`, { name: `n${i}`, description: "d", previousNames: [`p${i}`] });
    new TerraformOutput(stack, `o${i}`, { value: token.tokenId });
  }
});

test("one environment value per part a provisioner needs: the create half two (three with previousNames), the destroy half two", () => {
  for (const sync of Object.values<any>(json.resource.null_resource)) {
    const [create, destroy] = sync.provisioner.map((p: any) => Object.keys(p["local-exec"].environment ?? {}).sort());
    rule(
      JSON.stringify(create) === JSON.stringify(["GPUCLOUD_TOKEN_PLANNED", "GPUCLOUD_TOKEN_PREVIOUS_NAMES", "GPUCLOUD_TOKEN_TRIGGERS"]) &&
        JSON.stringify(destroy) === JSON.stringify(["GPUCLOUD_TOKEN_PLAN_TIME", "GPUCLOUD_TOKEN_TRIGGERS"]),
      `a token's provisioners have environment values ${JSON.stringify({ create, destroy })}. Terraform parses and validates ` +
        "every value of every provisioner of every token at each plan, so a value is paid per token: fold a new input into " +
        "the triggers (GPUCLOUD_TOKEN_TRIGGERS) or into what the plan showed (GPUCLOUD_TOKEN_PLANNED), and measure with " +
        "npm run bench:ratio (docs/performance.md).",
    );
  }
});

test("short keys in the stack read's query and result: t<N>.<field>, fields of at most 14 characters", () => {
  const reads = Object.values<any>(json.data.external);
  for (const read of reads) {
    for (const key of Object.keys(read.query)) {
      const perToken = /^t\d+\./.test(key);
      rule(
        !key.includes(".") || (perToken && key.length - key.indexOf(".") - 1 <= 14),
        `the query key "${key}" is not t<N>.<field> with a short field. The read's result, keyed the same way, is kept in ` +
          "the state, and Terraform copies the state for every output it plans: every character of a key is paid per " +
          "token and per output (docs/performance.md).",
      );
    }
  }
});

test("the roster's input is literal text: no interpolation for literal names", () => {
  const roster = json.resource.terraform_data.gpucloud_token_roster;
  rule(
    typeof roster.input === "string" && !roster.input.includes("${"),
    "the roster's input holds an expression although every name is literal. Terraform parses every string of the " +
      "configuration at each plan, and literal text is the cheapest to parse; an interpolation is for a name that is an " +
      "expression only (src/constructs/token-roster.ts).",
  );
});
