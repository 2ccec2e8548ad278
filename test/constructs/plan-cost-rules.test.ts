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

test("one provisioner per account's writer; its environment holds per token only the planned id, literal props are in the inputs file", () => {
  const writers = Object.values<any>(json.resource.null_resource);
  rule(
    writers.length === 1 && writers[0].provisioner.length === 1,
    `the stack has ${writers.length} null_resources with ${JSON.stringify(writers.map((w) => w.provisioner.length))} provisioners ` +
      "for three tokens of one account. Terraform starts one process per provisioner and evaluates every provisioner block " +
      "at each plan: the tokens of an account share one writer with one provisioner (src/constructs/token-writer.ts).",
  );
  const environment = writers[0].provisioner[0]["local-exec"].environment ?? {};
  const keys = Object.keys(environment).sort();
  const planned = /^\$\{jsonencode\(\{(.*)\}\)\}$/.exec(environment.GPUCLOUD_WRITER_PLANNED_0 ?? "")?.[1] ?? "";
  const items = planned.split(/, (?="s\/)/);
  rule(
    JSON.stringify(keys) === JSON.stringify(["GPUCLOUD_WRITER_INPUTS", "GPUCLOUD_WRITER_PLANNED_0", "GPUCLOUD_WRITER_TICKET"]) &&
      items.length === 3 &&
      items.every((item) => /^"s\/t\d" = \{i = local\.[\w-]+\["t\d\.id"\]\}$/.test(item)),
    `the writer's environment is ${JSON.stringify(environment)}. Terraform parses and evaluates it at each plan, so what it ` +
      "holds per token is paid per token: the plan's id only; literal names and descriptions go into the inputs file " +
      "(GPUCLOUD_WRITER_INPUTS), and a new input of the default account into the file or the planned item, measured with " +
      "npm run bench:ratio (docs/performance.md).",
  );
});

test("the writer's triggers hold per token its name, its managed description and its drift marker, and nothing else", () => {
  const triggers = Object.values<any>(json.resource.null_resource)[0].triggers;
  const expected = [0, 1, 2].flatMap((i) => [`s/t${i}.description`, `s/t${i}.in_sync`, `s/t${i}.name`]);
  rule(
    JSON.stringify(Object.keys(triggers).sort()) === JSON.stringify(expected),
    `the writer's trigger keys are ${JSON.stringify(Object.keys(triggers))}. Each key is shown by every plan that changes ` +
      "the writer and kept in the state; a value the next plan does not recompute the same way (an id, previous names) " +
      "would replace the writer at every plan (issue 41).",
  );
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
