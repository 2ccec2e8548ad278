import { Resource } from "@cdktf/provider-null/lib/resource";
import { TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";

import { ApiToken, FlavorPreference, Flavors } from "../../src";

/** The stack's data "external" blocks, by the command each runs, with their queries. */
function reads(
  build: (stack: TerraformStack) => void,
): { name: string; command: string; query: Record<string, string>; count?: unknown }[] {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  build(stack);
  const json = JSON.parse(Testing.synth(stack));
  return Object.entries<any>(json.data.external).map(([name, d]) => ({ name, command: d.program[2], query: d.query, count: d.count }));
}
const lookupsOf = (query: Record<string, string>) =>
  Object.keys(query)
    .filter((k) => k.endsWith(".lookup"))
    .map((k) => query[k])
    .sort();
const plannedReads = (all: ReturnType<typeof reads>) => all.filter((r) => !r.name.includes("after-write"));

describe("the stack's one read", () => {
  test("tokens and literal lookups: one data source at plan (besides the reads after the writes, count 0 while in sync)", () => {
    const all = reads((stack) => {
      new Flavors(stack, "h100", { gpu: "H100" });
      new FlavorPreference(stack, "pick", { choices: [{ gpu: "H100" }, { gpu: "A100" }] });
      for (let i = 0; i < 3; i++) new ApiToken(stack, `t${i}`, { name: `n${i}` });
    });
    const planned = plannedReads(all);
    expect(planned).toHaveLength(1);
    expect(planned[0].command).toBe("stack-read");
    expect(lookupsOf(planned[0].query)).toEqual(["flavor-preference", "flavors"]);
    expect(Object.keys(planned[0].query).filter((k) => k.endsWith(".name"))).toHaveLength(3);
    // The reads after the writes carry the tokens only.
    for (const r of all.filter((r) => r.name.includes("after-write"))) expect(lookupsOf(r.query)).toEqual([]);
  });

  test("a stack of lookups only: one data source, the warnings' check block and the (empty) ledger, no writer", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "test");
    new Flavors(stack, "a", { gpu: "H100" });
    new Flavors(stack, "b", { regionId: "us-east-1" });
    const json = JSON.parse(Testing.synth(stack));
    expect(Object.values<any>(json.data.external).map((d) => d.program[2])).toEqual(["stack-read"]);
    // A removed ApiToken is said in the plan of a stack whose lookups stay (the ledger is read from its output).
    expect(Object.keys(json.check)).toEqual(["gpucloud_api_tokens"]);
    expect(json.output.gpucloud_token_ledger).toBeDefined();
    expect(json.resource?.null_resource).toBeUndefined();
    expect(json.terraform.required_providers.null).toBeUndefined();
  });

  test("a lookup with an expression keeps its own data source and stays out of the tokens' query", () => {
    const planned = plannedReads(
      reads((stack) => {
        const gpu = new TerraformVariable(stack, "gpu", { type: "string" });
        new Flavors(stack, "computed", { gpu: gpu.stringValue });
        new FlavorPreference(stack, "literal", { choices: [{ gpu: "H100" }] });
        new ApiToken(stack, "t", { name: "n" });
      }),
    );
    expect(planned.map((r) => r.command).sort()).toEqual(["flavors", "stack-read"]);
    const tokensRead = planned.find((r) => r.command === "stack-read")!;
    expect(lookupsOf(tokensRead.query)).toEqual(["flavor-preference"]);
    expect(planned.find((r) => r.command === "flavors")!.query).toEqual({ gpu: "${var.gpu}" });
  });

  test("a token whose name is an expression leaves the literal lookups in the stack's read: its query holds no expression", () => {
    const planned = plannedReads(
      reads((stack) => {
        new Flavors(stack, "h100", { gpu: "H100" });
        const seed = new Resource(stack, "seed", {});
        new ApiToken(stack, "t", { name: `n-${seed.id}`, description: `${seed.id}`, previousNames: [`o-${seed.id}`] });
      }),
    );
    expect(planned).toHaveLength(1);
    expect(lookupsOf(planned[0].query)).toEqual(["flavors"]);
    expect(JSON.stringify(planned[0].query)).not.toContain("${null_resource");
  });

  test("a token whose baseUrl is an expression, declared after the lookups: the literal lookups get one read of their own", () => {
    const planned = plannedReads(
      reads((stack) => {
        new Flavors(stack, "h100", { gpu: "H100" });
        new FlavorPreference(stack, "pick", { choices: [{ gpu: "H100" }] });
        const seed = new Resource(stack, "seed", {});
        new ApiToken(stack, "t", { name: "n", baseUrl: `https://${seed.id}.example` });
      }),
    );
    expect(planned).toHaveLength(2);
    const [tokensRead, lookups] = [planned.find((r) => !r.name.includes("lookups"))!, planned.find((r) => r.name.includes("lookups"))!];
    expect(lookupsOf(tokensRead.query)).toEqual([]);
    expect(lookupsOf(lookups.query)).toEqual(["flavor-preference", "flavors"]);
    expect(lookups.command).toBe("stack-read");
    expect(lookups.count).toBeUndefined();
  });
});

describe("the ledger output", () => {
  test.each(["before", "after"])("a user output of the ledger's name (declared %s the tokens) fails at synth, naming it", (order) => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const clash = () => new TerraformOutput(stack, "gpucloud_token_ledger", { value: "mine" });
    if (order === "before") clash();
    new ApiToken(stack, "t", { name: "t" });
    if (order === "after") clash();
    expect(() => Testing.synth(stack, true)).toThrow(
      /the output "gpucloud_token_ledger" at s\/gpucloud_token_ledger has the name of the ledger this library keeps in the state/,
    );
  });

  test("a resource of the token writes' prefix fails at synth; the library's own pass", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    new ApiToken(stack, "t", { name: "t" });
    new Resource(stack, "gpucloud_setup", {});
    expect(() => Testing.synth(stack, true)).toThrow(
      /the null_resource "gpucloud_setup" at s\/gpucloud_setup starts with "gpucloud_", which this library keeps for its token writes/,
    );
    const ours = new TerraformStack(Testing.app(), "s");
    new ApiToken(ours, "t", { name: "t" });
    expect(() => Testing.synth(ours, true)).not.toThrow();
  });

  test("a computed name reaches the roster through the stack read's `given` local, not the token's write", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    new ApiToken(stack, "t", { name: new TerraformVariable(stack, "n", { type: "string" }).stringValue });
    const json = JSON.parse(Testing.synth(stack));
    const input = json.resource.terraform_data.gpucloud_token_roster.input as string;
    expect(input).toMatch(/local\.gpucloud-stack-read_given_\w+\["s\/t"\]\.n/);
    expect(input).not.toContain("null_resource");
  });

  test("a description alone given as an expression: the token is found by name at plan; the description reaches the writer", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    const v = new TerraformVariable(stack, "d", { type: "string" });
    new ApiToken(stack, "t", { name: "t-name", description: v.stringValue, previousNames: ["t-old"] });
    const json = JSON.parse(Testing.synth(stack));
    const read = Object.entries<any>(json.data.external).find(([k]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(k))![1];
    expect(read.query).toMatchObject({ "t0.name": "t-name", "t0.previous.0": "t-old", "t0.desc_at_apply": "true" });
    expect(read.query).not.toHaveProperty("t0.description");
    expect(read.query).not.toHaveProperty("t0.by_ledger");
    const given = Object.keys(json.locals).find((k) => k.includes("_given_"))!;
    expect(json.locals[given]).toEqual({ "s/t": { n: "t-name", d: "${var.d}", p: ["t-old"] } });
  });

  test("the ledger keeps the name and description digest a token known by its ledger entry is given, over its read's", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    new ApiToken(stack, "t", { name: new TerraformVariable(stack, "n", { type: "string" }).stringValue, description: "d" });
    new ApiToken(stack, "u", { name: "u" });
    const json = JSON.parse(Testing.synth(stack));
    const given = Object.keys(json.locals).find((k) => k.includes("_given_"))!;
    const merged = Object.keys(json.locals).find((k) => k.includes("_ledger-tokens_"))!;
    expect(json.locals[given]).toEqual({ "s/t": { n: "${var.n}", d: "d", p: [] } });
    expect(json.output.gpucloud_token_ledger.value).toContain(
      `t = merge(local.${merged}, {for p, g in local.${given} : p => [g.n, local.${merged}[p][1], local.${merged}[p][2], ` +
        `try(substr(sha256(g.d), 0, 16), "")] if contains(keys(local.${merged}), p)})`,
    );
  });

  test("without a clash, the ledger is the one output of its name, with its format version", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    new ApiToken(stack, "t", { name: "t" });
    new TerraformOutput(stack, "other", { value: "x" });
    const json = JSON.parse(Testing.synth(stack));
    expect(json.output.gpucloud_token_ledger.value).toMatch(/, v = 1\}\) : null\}$/);
  });
});
