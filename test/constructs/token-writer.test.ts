import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { App, TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";
import { Construct } from "constructs";

import { ApiToken, GpuCloudAccount } from "../../src";

/** Synthesizes one stack and returns its parsed cdk.tf.json. */
function synth(build: (stack: TerraformStack) => void): any {
  const stack = new TerraformStack(Testing.app(), "s");
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

const hex8 = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 8);

/** The writer's provisioner environment. */
const environmentOf = (writer: any): Record<string, string> => writer.provisioner[0]["local-exec"].environment;

/** The items of a GPUCLOUD_WRITER_PLANNED_<n> value, `"<path>" = {...}` each. */
function plannedItems(value: string): string[] {
  const body = /^\$\{jsonencode\(\{(.*)\}\)\}$/.exec(value)?.[1];
  if (body === undefined) throw new Error(`not a planned chunk: ${value}`);
  return body.split(/, (?="[^"]+" = \{)/);
}

describe("TokenWriter (synthesis)", () => {
  test("one writer per stack and account, named for the account: the default one, a prefix, a base URL", () => {
    const app = Testing.app();
    const prod = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_" });
    const eu = new GpuCloudAccount(app, "eu", { envPrefix: "GPUCLOUD_EU_", baseUrl: "https://eu.example.test" });
    const one = new TerraformStack(app, "one");
    const two = new TerraformStack(app, "two");
    new ApiToken(one, "a", { name: "a" });
    new ApiToken(one, "b", { name: "b" });
    new ApiToken(one, "p", { name: "p", account: prod });
    new ApiToken(one, "q", { name: "q", account: prod });
    new ApiToken(one, "e", { name: "e", account: eu });
    new ApiToken(one, "u", { name: "u", baseUrl: "https://other.example.test" });
    new ApiToken(two, "p", { name: "p2", account: prod });
    const writersOf = (stack: TerraformStack) => JSON.parse(Testing.synth(stack)).resource.null_resource;
    const inOne = writersOf(one);
    expect(Object.keys(inOne).sort()).toEqual(
      [
        "gpucloud_token_writer",
        "gpucloud_token_writer_gpucloud_prod",
        `gpucloud_token_writer_gpucloud_eu_${hex8("https://eu.example.test")}`,
        `gpucloud_token_writer_${hex8("https://other.example.test")}`,
      ].sort(),
    );
    const paths = (writer: any) => [...new Set(Object.keys(writer.triggers).map((k) => k.slice(0, k.lastIndexOf("."))))].sort();
    expect(paths(inOne.gpucloud_token_writer)).toEqual(["one/a", "one/b"]);
    expect(paths(inOne.gpucloud_token_writer_gpucloud_prod)).toEqual(["account", "one/p", "one/q"]);
    // Each stack has its own writer of an account: a stack's plan and apply are its own.
    const inTwo = writersOf(two);
    expect(Object.keys(inTwo)).toEqual(["gpucloud_token_writer_gpucloud_prod"]);
    expect(paths(inTwo.gpucloud_token_writer_gpucloud_prod)).toEqual(["account", "two/p"]);
    // The account's writer knows where it writes; the default account's sets nothing (the GPUCLOUD_* variables).
    expect(environmentOf(inOne.gpucloud_token_writer)).not.toHaveProperty("GPUCLOUD_WRITER_ENV_PREFIX");
    expect(environmentOf(inOne.gpucloud_token_writer)).not.toHaveProperty("GPUCLOUD_WRITER_BASE_URL");
    expect(environmentOf(inOne.gpucloud_token_writer_gpucloud_prod)).toMatchObject({ GPUCLOUD_WRITER_ENV_PREFIX: "GPUCLOUD_PROD_" });
    expect(environmentOf(inOne.gpucloud_token_writer_gpucloud_prod)).not.toHaveProperty("GPUCLOUD_WRITER_BASE_URL");
  });

  test("trigger keys per token path and field: the name, the managed description, the drift marker", () => {
    const json = synth((stack) => {
      const group = new Construct(stack, "gpu-ci");
      new ApiToken(group, "ci-token", { name: "ci", description: "v1" });
      new ApiToken(group, "bare", { name: "bare" });
    });
    const writer = json.resource.null_resource.gpucloud_token_writer;
    const observed = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const inSync = (slot: string) =>
      `\${local.${observed}["${slot}.in_sync"] == "true" ? "true" : (timestamp() == "never" ? "never" : "true")}`;
    // A description omitted has no key: the plan never shows one, and the writer leaves it as it is.
    expect(writer.triggers).toEqual({
      "s/gpu-ci/ci-token.name": "ci",
      "s/gpu-ci/ci-token.description": "v1",
      "s/gpu-ci/ci-token.in_sync": inSync("t0"),
      "s/gpu-ci/bare.name": "bare",
      "s/gpu-ci/bare.in_sync": inSync("t1"),
    });
    // Nothing else Terraform would compare at each plan: no id, no previous name, no lifecycle to keep a stale writer.
    expect(writer.lifecycle).toBeUndefined();
    expect(writer.depends_on).toBeUndefined();
    expect(writer.count).toBeUndefined();
  });

  test("names and descriptions given as Terraform expressions reach the writer through PLANNED as n and d, with the previous names as p", () => {
    const json = synth((stack) => {
      const suffix = new TerraformVariable(stack, "suffix", { type: "string" });
      const seed = new Resource(stack, "seed", {});
      new ApiToken(stack, "lit", { name: "lit", description: "plain" });
      new ApiToken(stack, "expr", { name: `ci-${suffix.stringValue}`, description: `made by ${seed.id}` });
      new ApiToken(stack, "half", { name: `half-${suffix.stringValue}` });
    });
    const writer = json.resource.null_resource.gpucloud_token_writer;
    const observed = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const given = Object.keys(json.locals).find((k) => k.includes("_given_"))!;
    const environment = environmentOf(writer);
    expect(Object.keys(environment).filter((k) => k.startsWith("GPUCLOUD_WRITER_PLANNED_"))).toEqual(["GPUCLOUD_WRITER_PLANNED_0"]);
    // The values as Terraform resolves them, from the stack's `given` local; literal ones stay in the inputs file.
    expect(plannedItems(environment.GPUCLOUD_WRITER_PLANNED_0)).toEqual([
      `"s/lit" = {i = local.${observed}["t0.id"]}`,
      `"s/expr" = {i = local.${observed}["t1.id"], n = local.${given}["s/expr"].n, d = local.${given}["s/expr"].d, p = local.${given}["s/expr"].p}`,
      `"s/half" = {i = local.${observed}["t2.id"], n = local.${given}["s/half"].n, p = local.${given}["s/half"].p}`,
    ]);
    expect(json.locals[given]).toEqual({
      "s/expr": { n: "ci-${var.suffix}", d: "made by ${null_resource.seed.id}", p: [] },
      "s/half": { n: "half-${var.suffix}", d: null, p: [] },
    });
    // The plan still names them: the triggers hold the expressions.
    expect(writer.triggers["s/expr.name"]).toBe("ci-${var.suffix}");
    expect(writer.triggers["s/expr.description"]).toBe("made by ${null_resource.seed.id}");
    expect(writer.triggers).not.toHaveProperty("s/half.description");
    // The plan's ticket, which the plan-time read made.
    expect(environment.GPUCLOUD_WRITER_TICKET).toBe(`\${local.${observed}["ticket"]}`);
  });

  test("more than 200 tokens make two PLANNED chunks, each token in one of them, in order", () => {
    const json = synth((stack) => {
      for (let i = 0; i < 201; i++) new ApiToken(stack, `t${i}`, { name: `token-${i}` });
    });
    const environment = environmentOf(json.resource.null_resource.gpucloud_token_writer);
    expect(Object.keys(environment).sort()).toEqual([
      "GPUCLOUD_WRITER_INPUTS",
      "GPUCLOUD_WRITER_PLANNED_0",
      "GPUCLOUD_WRITER_PLANNED_1",
      "GPUCLOUD_WRITER_TICKET",
    ]);
    const first = plannedItems(environment.GPUCLOUD_WRITER_PLANNED_0);
    const second = plannedItems(environment.GPUCLOUD_WRITER_PLANNED_1);
    expect(first).toHaveLength(200);
    expect(second).toHaveLength(1);
    expect([...first, ...second].map((item) => /^"([^"]+)"/.exec(item)![1])).toEqual(Array.from({ length: 201 }, (_, i) => `s/t${i}`));
    // 200 is one chunk.
    const exactly = synth((stack) => {
      for (let i = 0; i < 200; i++) new ApiToken(stack, `t${i}`, { name: `token-${i}` });
    });
    expect(Object.keys(environmentOf(exactly.resource.null_resource.gpucloud_token_writer)).filter((k) => k.includes("PLANNED"))).toEqual([
      "GPUCLOUD_WRITER_PLANNED_0",
    ]);
  });

  test("the read after the writes depends on its account's writer only; the ledger output on the reads after the writes", () => {
    const json = synth((stack) => {
      const prod = new GpuCloudAccount(stack, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      new ApiToken(stack, "a", { name: "a" });
      new ApiToken(stack, "p", { name: "p", account: prod });
    });
    const reads = Object.entries<any>(json.data.external).filter(([k]) => k.includes("after-write"));
    expect(reads.map(([, r]) => r.depends_on).sort()).toEqual([
      ["null_resource.gpucloud_token_writer"],
      ["null_resource.gpucloud_token_writer_gpucloud_prod"],
    ]);
    expect([...json.output.gpucloud_token_ledger.depends_on].sort()).toEqual(reads.map(([k]) => `data.external.${k}`).sort());
  });

  test("ApiToken.fqn is its account's read after the writes, so dependsOn: [token] waits for the writes", () => {
    const json = synth((stack) => {
      const prod = new GpuCloudAccount(stack, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      const a = new ApiToken(stack, "a", { name: "a" });
      const p = new ApiToken(stack, "p", { name: "p", account: prod });
      new Resource(stack, "after_a", { dependsOn: [a] });
      new Resource(stack, "after_both", { dependsOn: [a, p] });
      new TerraformOutput(stack, "after_p", { value: "x", dependsOn: [p] });
    });
    const readOf = (writer: string) =>
      `data.external.${Object.entries<any>(json.data.external).find(([, r]) => r.depends_on?.[0] === `null_resource.${writer}`)![0]}`;
    const defaultRead = readOf("gpucloud_token_writer");
    const prodRead = readOf("gpucloud_token_writer_gpucloud_prod");
    expect(defaultRead).toMatch(/^data\.external\.gpucloud-stack-read_after-write_[0-9A-F]+$/);
    expect(json.resource.null_resource.after_a.depends_on).toEqual([defaultRead]);
    expect(json.resource.null_resource.after_both.depends_on).toEqual([defaultRead, prodRead]);
    // cdktf writes an output's depends_on as an interpolation, the same for any resource.
    expect(json.output.after_p.depends_on).toEqual([`\${${prodRead}}`]);
  });

  test("a token added after its stack was synthesized fails, rather than be left out of the writer's inputs", () => {
    const stack = new TerraformStack(Testing.app(), "s");
    new ApiToken(stack, "a", { name: "a" });
    Testing.synth(stack);
    expect(() => new ApiToken(stack, "late", { name: "late" })).toThrow(
      /the ApiToken s\/late was added while its stack was being synthesized; create it before app\.synth\(\)/,
    );
  });
});

describe("TokenWriter (full synthesis)", () => {
  test("the inputs file exists in the stack folder and holds the literal names and descriptions; nothing secret is written", () => {
    const secrets = {
      GPUCLOUD_USERNAME: "writer-user-5c2e",
      GPUCLOUD_PASSWORD: "writer-password-8d7f0a",
      GPUCLOUD_PASSWORD_MD5: "fedcba9876543210fedcba9876543210",
      GPUCLOUD_API_TOKEN: "eyJhbGciOiJIUzI1NiJ9.writer-api-token.sig",
      GPUCLOUD_PROD_PASSWORD: "writer-prod-password-41aa",
    };
    const saved = { ...process.env };
    Object.assign(process.env, secrets);
    let stackDir: string;
    try {
      const app = new App({ outdir: Testing.app().outdir, skipValidation: false });
      const stack = new TerraformStack(app, "full");
      const prod = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      const suffix = new TerraformVariable(stack, "suffix", { type: "string" });
      const token = new ApiToken(stack, "ci", { name: "ci-${literal}", description: "for CI %{ x }" });
      // Decomposed (e + U+0301): written in NFC, as Terraform keeps the plan's strings.
      new ApiToken(stack, "bare", { name: "bare", description: "cafe\u0301" });
      new ApiToken(stack, "expr", { name: `expr-${suffix.stringValue}`, description: `d-${suffix.stringValue}` });
      new ApiToken(stack, "prod", { name: "on-prod", description: "p", account: prod });
      new TerraformOutput(stack, "token", { value: token.token, sensitive: true });
      app.synth();
      stackDir = path.join(app.outdir, "stacks", "full");
    } finally {
      process.env = saved;
    }
    const config = readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8");
    const json = JSON.parse(config);
    const inputsOf = (writer: string) => {
      const relative = environmentOf(json.resource.null_resource[writer]).GPUCLOUD_WRITER_INPUTS;
      // Relative to the stack folder, Terraform's working directory: the folder can be moved to another runner.
      expect(relative).toMatch(/^assets\/[^/]+\/[0-9A-F]+\/writer-inputs\.json$/);
      const file = path.join(stackDir, relative);
      expect(existsSync(file)).toBe(true);
      return { text: readFileSync(file, "utf8"), parsed: JSON.parse(readFileSync(file, "utf8")) };
    };
    const defaultInputs = inputsOf("gpucloud_token_writer");
    // Literal, as configured (a file Terraform does not interpolate); "" and null where the plan gives the value.
    expect(defaultInputs.parsed).toEqual({
      v: 1,
      tokens: {
        "full/ci": ["ci-${literal}", "for CI %{ x }"],
        "full/bare": ["bare", "caf\u00e9"],
        "full/expr": ["", null],
      },
    });
    expect(json.resource.null_resource.gpucloud_token_writer.triggers["full/bare.description"]).toBe("caf\u00e9");
    // Each account's writer has its own file, with its tokens only.
    const prodInputs = inputsOf("gpucloud_token_writer_gpucloud_prod");
    expect(prodInputs.parsed).toEqual({ v: 1, tokens: { "full/prod": ["on-prod", "p"] } });

    const assetFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? assetFiles(path.join(dir, e.name)) : [path.join(dir, e.name)],
      );
    const writerFiles = assetFiles(path.join(stackDir, "assets")).filter((f) => f.endsWith("writer-inputs.json"));
    expect(writerFiles).toHaveLength(2);
    for (const value of Object.values(secrets)) {
      expect(config).not.toContain(value);
      expect(defaultInputs.text).not.toContain(value);
      expect(prodInputs.text).not.toContain(value);
    }
  });
});
