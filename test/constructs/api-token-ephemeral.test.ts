import { TerraformProvider, TerraformStack, TerraformVariable, Testing } from "cdktf";
import type { Construct } from "constructs";

import { ApiToken, GpuCloudAccount } from "../../src";

/** Synthesizes one stack and returns its parsed cdk.tf.json. */
function synth(build: (stack: TerraformStack) => void): any {
  const stack = new TerraformStack(Testing.app(), "test");
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

function only<T>(record: Record<string, T> | undefined): T {
  const values = Object.values(record ?? {});
  expect(values).toHaveLength(1);
  return values[0];
}

/** A user's own `provider "local"` block (as a prebuilt binding would declare it). */
class UsersLocalProvider extends TerraformProvider {
  constructor(
    scope: Construct,
    id: string,
    readonly userAlias?: string,
  ) {
    super(scope, id, {
      terraformResourceType: "local",
      terraformGeneratorMetadata: { providerName: "local", providerVersion: "2.8.0", providerVersionConstraint: "~> 2.8" },
      terraformProviderSource: "local",
    });
    this.alias = userAlias;
  }
  protected synthesizeAttributes() {
    return { alias: this.userAlias };
  }
}

describe("ApiToken valueInState and ephemeralToken (synthesis)", () => {
  test("by default nothing changes: no value_in_state in the query, no ephemeral block, no local provider; Terraform >= 1.5 for the check block", () => {
    const json = synth((stack) => void new ApiToken(stack, "t", { name: "ci" }).token);
    expect(JSON.stringify(json.data.external)).not.toContain("value_in_state");
    expect(json.ephemeral).toBeUndefined();
    expect(json.provider.local).toBeUndefined();
    expect(json.terraform.required_version).toBe(">= 1.5.0");
  });

  test.each([
    ["before", true],
    ["after", false],
  ])("the app's own required_version, set %s the constructs, replaces the library's", (_when, before) => {
    const json = synth((stack) => {
      if (before) stack.addOverride("terraform.required_version", "~> 1.11");
      void new ApiToken(stack, "t", { name: "ci", valueInState: false }).ephemeralToken;
      new ApiToken(stack, "u", { name: "cu" });
      if (!before) stack.addOverride("terraform.required_version", "~> 1.11");
    });
    expect(json.terraform.required_version).toBe("~> 1.11");
  });

  test("valueInState: false asks both stack reads to leave the value out", () => {
    const json = synth((stack) => void new ApiToken(stack, "t", { name: "ci", valueInState: false }));
    const queries = Object.values<any>(json.data.external).map((d) => d.query);
    expect(queries).toHaveLength(2);
    for (const query of queries) {
      expect(Object.entries(query).filter(([k]) => k.endsWith(".value_in_state"))).toEqual([[expect.any(String), "false"]]);
    }
  });

  test("token is refused with valueInState: false, naming the construct, the field and the alternative", () => {
    const stack = new TerraformStack(Testing.app(), "test");
    const token = new ApiToken(stack, "t", { name: "ci", valueInState: false });
    expect(() => token.token).toThrow(
      /^ApiToken "test\/t": token is not available with valueInState: false .*use this ApiToken's ephemeralToken instead \(Terraform >= 1\.10\)/,
    );
    expect(() => token.tokenId).not.toThrow();
  });

  test("valueInState must be a boolean", () => {
    const stack = new TerraformStack(Testing.app(), "test");
    expect(() => new ApiToken(stack, "t", { name: "ci", valueInState: "no" as unknown as boolean })).toThrow(
      /ApiToken "test\/t": valueInState must be true or false/,
    );
  });

  test("ephemeralToken: one ephemeral local_command per stack reads every asking token by id; hashicorp/local >= 2.7 and Terraform >= 1.10", () => {
    let first = "";
    const json = synth((stack) => {
      const a = new ApiToken(stack, "a", { name: "ci-a", valueInState: false, baseUrl: "https://api.example/${x}" });
      const b = new ApiToken(stack, "b", { name: "ci-b", valueInState: false });
      new ApiToken(stack, "c", { name: "ci-c" });
      first = a.ephemeralToken;
      expect(a.ephemeralToken).toBe(first); // made once
      void b.ephemeralToken;
    });
    const command = only<any>(json.ephemeral.local_command);
    expect(Object.keys(json.ephemeral.local_command)).toEqual(["gpucloud_token_values"]);
    expect(command.command).toBe("node");
    expect(command.arguments).toEqual([expect.stringMatching(/^\.\/assets\/gpucloud-runtime\/[0-9A-F]+\/gpucloud-tf\.js$/), "token-value"]);
    // The query: each asking token's id (an expression over the stack reads) and its literal base URL; not token c.
    const items = /^\$\{jsonencode\(\{(.*)\}\)\}$/.exec(command.stdin)![1].split(/, (?=")/);
    expect(items.map((i) => i.split(" = ")[0])).toEqual([
      expect.stringMatching(/^"\w+\.id"$/),
      expect.stringMatching(/^"\w+\.base_url"$/),
      expect.stringMatching(/^"\w+\.id"$/),
    ]);
    // No run's ticket: the script logs in itself (no session is shared between processes any more).
    expect(command.stdin).not.toContain("ticket");
    // The token-value query is keyed by construct address; the attribute, by the token's slot in the stack's read.
    expect(items[0]).toMatch(/^"\w+\.id" = local\.gpucloud-stack-read_attributes_\w+\["(t\d+)"\]\["\1\.id"\]$/);
    expect(items[1]).toMatch(/= "https:\/\/api\.example\/\$\$\{x\}"$/);
    expect(json.provider.local).toEqual([{}]);
    expect(json.terraform.required_providers.local).toEqual({ source: "local", version: "2.7.0" });
    expect(json.terraform.required_version).toBe(">= 1.10.0");
  });

  test("ephemeralToken: a base URL holding an expression is read from the plan-time read's query, not written as a literal", () => {
    const json = synth((stack) => {
      const host = new TerraformVariable(stack, "host", { type: "string" });
      void new ApiToken(stack, "t", { name: "ci", valueInState: false, baseUrl: `https://${host.stringValue}/v1` }).ephemeralToken;
    });
    const planTimeRead = Object.entries<any>(json.data.external).find(([name]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(name))!;
    expect(planTimeRead[1].query["t0.base_url"]).toBe("https://${var.host}/v1");
    const key = planTimeRead[1].query["t0.key"];
    const stdin: string = only<any>(json.ephemeral.local_command).stdin;
    expect(stdin).not.toContain("var.host/v1");
    expect(stdin).toContain(`"${key}.base_url" = data.external.${planTimeRead[0]}.query["t0.base_url"]`);
  });

  test("ephemeralToken resolves to the sensitive value of its own key, decoded from the command's stdout", () => {
    const json = synth((stack) => {
      const token = new ApiToken(stack, "t", { name: "ci", valueInState: false });
      stack.addOverride("locals.v", token.ephemeralToken);
    });
    const [, read] = Object.entries<any>(json.data.external).find(([name]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(name))!;
    const key = read.query["t0.key"];
    expect(key).toMatch(/^[0-9a-f]{42}$/);
    expect(json.locals.v).toBe(`\${sensitive(jsondecode(ephemeral.local_command.gpucloud_token_values.stdout)["${key}"])}`);
  });

  test("ephemeralToken of a token on another account reads it with that account's variable prefix and base URL", () => {
    const app = Testing.app();
    const prod = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_", baseUrl: "https://prod.example.test" });
    const stack = new TerraformStack(app, "test");
    void new ApiToken(stack, "t", { name: "ci", valueInState: false, account: prod }).ephemeralToken;
    const json = JSON.parse(Testing.synth(stack));
    const stdin: string = only<any>(json.ephemeral.local_command).stdin;
    expect(stdin).toMatch(/"\w+\.base_url" = "https:\/\/prod\.example\.test"/);
    expect(stdin).toMatch(/"\w+\.env_prefix" = "GPUCLOUD_PROD_"/);
  });

  test.each([
    ["before", true],
    ["after", false],
  ])("reuses the user's own unaliased local provider, declared %s; an aliased one does not count", (_label, before) => {
    const json = synth((stack) => {
      if (before) new UsersLocalProvider(stack, "mine");
      new UsersLocalProvider(stack, "aliased", "other");
      void new ApiToken(stack, "t", { name: "ci", valueInState: false }).ephemeralToken;
      if (!before) new UsersLocalProvider(stack, "mine");
    });
    expect(json.provider.local).toHaveLength(2);
    expect(json.terraform.required_providers.local.version).toBe("2.8.0");
  });
});
