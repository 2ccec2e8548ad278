import { App, TerraformStack, Testing } from "cdktf";

import { ApiToken, FlavorPreference, Flavors, GpuCloudAccount } from "../../src";

function stackJson(stack: TerraformStack): any {
  return JSON.parse(Testing.synth(stack));
}

/** The stack's one token writer, with its Terraform name. */
function writer(json: any): [string, any] {
  const writers = Object.entries<any>(json.resource.null_resource);
  expect(writers).toHaveLength(1);
  return writers[0];
}

function planTimeReadQuery(json: any): Record<string, string> {
  return Object.entries<any>(json.data.external).find(([k]) => k.startsWith("gpucloud-stack-read_") && !k.includes("after-write"))![1]
    .query;
}

describe("GpuCloudAccount", () => {
  test("the default account writes nothing new: a stack with account = the default prefix synthesizes as without one", () => {
    const build = (withAccount: boolean) => {
      const app = Testing.app();
      const stack = new TerraformStack(app, "s");
      const account = withAccount ? new GpuCloudAccount(app, "default") : undefined;
      new ApiToken(stack, "ci", { name: "ci", account });
      new Flavors(stack, "f", { gpu: "A100", account });
      new FlavorPreference(stack, "p", { choices: [{ gpu: "A100" }], account });
      return Testing.synth(stack);
    };
    expect(build(true)).toBe(build(false));
  });

  test("another prefix travels to every script as a name only: its own writer, whose triggers and environment name the account", () => {
    const app = Testing.app();
    const prod = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_", baseUrl: "https://prod.example.test" });
    const stack = new TerraformStack(app, "s");
    new ApiToken(stack, "ci", { name: "ci", account: prod });
    new Flavors(stack, "f", { gpu: "A100", account: prod });
    new FlavorPreference(stack, "p", { choices: [{ gpu: "A100" }], account: prod });
    const json = stackJson(stack);
    const [name, resource] = writer(json);
    // The plan names the account's writer; the base URL, given, adds a digest of it.
    expect(name).toMatch(/^gpucloud_token_writer_gpucloud_prod_[0-9a-f]{8}$/);
    // A change of the account's prefix or address is a change the plan shows (and replaces the writer).
    expect(resource.triggers["account.env_prefix"]).toBe("GPUCLOUD_PROD_");
    expect(resource.triggers["account.base_url"]).toBe("https://prod.example.test");
    const environment = resource.provisioner[0]["local-exec"].environment;
    expect(environment.GPUCLOUD_WRITER_ENV_PREFIX).toBe("GPUCLOUD_PROD_");
    expect(environment.GPUCLOUD_WRITER_BASE_URL).toBe("https://prod.example.test");
    const query = planTimeReadQuery(json);
    expect(query["t0.key"]).toMatch(/^[0-9a-f]{42}$/);
    expect(query["t0.path"]).toBe("s/ci");
    expect(query["t0.env_prefix"]).toBe("GPUCLOUD_PROD_");
    expect(query["t0.base_url"]).toBe("https://prod.example.test");
    // The lookups ride on the stack's read, each with the account's prefix and address.
    for (const kind of ["flavors", "flavor-preference"]) {
      const lookup = Object.keys(query).find((k) => k.endsWith(".lookup") && query[k] === kind)!;
      const key = lookup.slice(0, -".lookup".length);
      expect(query[`${key}.env_prefix`]).toBe("GPUCLOUD_PROD_");
      expect(query[`${key}.base_url`]).toBe("https://prod.example.test");
    }
    const after = Object.entries<any>(json.data.external).find(([k]) => k.includes("after-write"))![1];
    expect(after.depends_on).toEqual([`null_resource.${name}`]);
    expect(after.query["t0.env_prefix"]).toBe("GPUCLOUD_PROD_");
    expect(after.query["t0.base_url"]).toBe("https://prod.example.test");
  });

  test("an account created in one stack serves the constructs of another stack", () => {
    const app = Testing.app();
    const a = new TerraformStack(app, "a");
    const b = new TerraformStack(app, "b");
    const prod = new GpuCloudAccount(a, "prod", { envPrefix: "PROD_" });
    new ApiToken(b, "ci", { name: "ci", account: prod });
    const [name, resource] = writer(stackJson(b));
    expect(name).toBe("gpucloud_token_writer_prod");
    expect(resource.triggers["account.env_prefix"]).toBe("PROD_");
  });

  test("one writer per account in a stack, each holding its own tokens only; prefixes differing in a trailing _ are two writers", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const prod = new GpuCloudAccount(app, "prod", { envPrefix: "PROD_" });
    const prod2 = new GpuCloudAccount(app, "prod2", { envPrefix: "PROD__" });
    new ApiToken(stack, "d", { name: "d" });
    new ApiToken(stack, "p", { name: "p", account: prod });
    new ApiToken(stack, "q", { name: "q", account: prod });
    new ApiToken(stack, "r", { name: "r", account: prod2 });
    const writers = stackJson(stack).resource.null_resource;
    const keys = (id: string) => Object.keys(writers[id].triggers).sort();
    expect(Object.keys(writers).sort()).toEqual(["gpucloud_token_writer", "gpucloud_token_writer_prod", "gpucloud_token_writer_prod_"]);
    expect(keys("gpucloud_token_writer")).toEqual(["s/d.in_sync", "s/d.name"]);
    expect(keys("gpucloud_token_writer_prod")).toEqual(["account.env_prefix", "s/p.in_sync", "s/p.name", "s/q.in_sync", "s/q.name"]);
    expect(keys("gpucloud_token_writer_prod_")).toEqual(["account.env_prefix", "s/r.in_sync", "s/r.name"]);
    expect(writers.gpucloud_token_writer_prod_.triggers["account.env_prefix"]).toBe("PROD__");
    for (const w of Object.values<any>(writers)) expect(w.provisioner).toHaveLength(1);
  });

  test.each(["gpucloud_prod_", "GPUCLOUD_PROD", "GPUCLOUD-PROD_", "1PROD_", "", "GPUCLOUD_WRITER_"])(
    "envPrefix %j is a synth error naming the construct path",
    (envPrefix) => {
      const app = Testing.app();
      const stack = new TerraformStack(app, "s");
      expect(() => new GpuCloudAccount(stack, "prod", { envPrefix })).toThrow(/^GpuCloudAccount "s\/prod": envPrefix /);
    },
  );

  test("a baseUrl with credentials is refused, naming the account's variables", () => {
    const app = Testing.app();
    expect(() => new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_", baseUrl: "https://u:p@x.test" })).toThrow(
      /GpuCloudAccount "prod": baseUrl must not contain credentials.*GPUCLOUD_PROD_USERNAME\/GPUCLOUD_PROD_PASSWORD or GPUCLOUD_PROD_API_TOKEN/,
    );
  });

  test.each([
    ["ApiToken", (s: TerraformStack, account: GpuCloudAccount) => new ApiToken(s, "c", { name: "n", account, baseUrl: "https://x.test" })],
    ["Flavors", (s: TerraformStack, account: GpuCloudAccount) => new Flavors(s, "c", { account, baseUrl: "https://x.test" })],
    [
      "FlavorPreference",
      (s: TerraformStack, account: GpuCloudAccount) => new FlavorPreference(s, "c", { choices: [{}], account, baseUrl: "https://x.test" }),
    ],
  ])("%s with both account and baseUrl is a synth error saying to put baseUrl on the account", (kind, make) => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const account = new GpuCloudAccount(app, "prod", { envPrefix: "PROD_" });
    expect(() => make(stack, account)).toThrow(
      new RegExp(`^${kind} "s/c": both account and baseUrl are given: put baseUrl on the GpuCloudAccount "prod"`),
    );
  });

  describe("app-wide name check", () => {
    test("the same literal name on one account in two stacks fails, naming both paths", () => {
      const app = Testing.app();
      const prod = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      new ApiToken(new TerraformStack(app, "staging"), "ci", { name: "ci", account: prod });
      expect(() => new ApiToken(new TerraformStack(app, "prod-stack"), "ci", { name: "ci", account: prod })).toThrow(
        /ApiToken "prod-stack\/ci": name "ci" is also the name of ApiToken "staging\/ci": two ApiTokens of one app would manage the same API token \(on the account GPUCLOUD_PROD_\*\)/,
      );
    });

    test("two account objects with the same prefix and base URL are one account", () => {
      const app = Testing.app();
      const one = new GpuCloudAccount(app, "one", { envPrefix: "PROD_", baseUrl: "https://p.test" });
      const two = new GpuCloudAccount(app, "two", { envPrefix: "PROD_", baseUrl: "https://p.test" });
      new ApiToken(new TerraformStack(app, "a"), "ci", { name: "x", previousNames: ["ci"], account: one });
      expect(() => new ApiToken(new TerraformStack(app, "b"), "ci", { name: "ci", account: two })).toThrow(
        /ApiToken "b\/ci": name "ci" is also a previous name of ApiToken "a\/ci"/,
      );
    });

    test("different accounts (prefix or literal base URL) may each have a token of that name, in one stack or two", () => {
      const app = new App({ outdir: Testing.app().outdir });
      const staging = new GpuCloudAccount(app, "staging", { envPrefix: "GPUCLOUD_STAGING_" });
      const prod = new GpuCloudAccount(app, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      const other = new GpuCloudAccount(app, "other", { envPrefix: "GPUCLOUD_PROD_", baseUrl: "https://other.test" });
      const one = new TerraformStack(app, "one");
      new ApiToken(one, "default", { name: "ci" });
      new ApiToken(one, "staging", { name: "ci", account: staging });
      new ApiToken(one, "prod", { name: "ci", account: prod });
      expect(() => new ApiToken(new TerraformStack(app, "two"), "other", { name: "ci", account: other })).not.toThrow();
      expect(Object.keys(planTimeReadQuery(stackJson(one))).filter((k) => k.endsWith(".name"))).toHaveLength(3);
    });
  });

  test("allowedIdentities pins the account: each of its ApiTokens carries the pin in the stack read's query", () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "s");
    const account = new GpuCloudAccount(stack, "prod", {
      envPrefix: "GPUCLOUD_PROD_",
      allowedIdentities: ["user ci-bot at https://api.example.com", "API token sha256:0123456789ab at https://api.example.com/v1"],
    });
    new ApiToken(stack, "ci", { name: "ci", account });
    new ApiToken(stack, "free", { name: "free" });
    const query = planTimeReadQuery(stackJson(stack));
    const pins = Object.entries(query).filter(([k]) => k.endsWith(".pin"));
    expect(pins).toEqual([
      [
        expect.stringMatching(/^t\d+\.pin$/),
        '["user ci-bot at https://api.example.com","API token sha256:0123456789ab at https://api.example.com/v1"]',
      ],
    ]);
  });

  test.each([
    [[], /allowedIdentities must be a non-empty list/],
    [
      ["alice"],
      /allowedIdentities\[0\] must be an identity at an API address as plans print it, "user <name> at <url>" or "API token sha256:<12 hex> at <url>", got "alice"/,
    ],
    // A user alone pins no deployment: the same user name on staging's API would pass.
    [["user ci-bot"], /allowedIdentities\[0\] must be an identity at an API address/],
    [["user ok at https://a.example", "API token sha256:xyz at https://a.example"], /allowedIdentities\[1\] must be an identity/],
    [["user ok at ftp-ish"], /allowedIdentities\[0\] must be an identity at an API address/],
    [["user ok at https://ci:s3cret@a.example"], /allowedIdentities\[0\]: the API address must be a URL without user information$/],
  ])("allowedIdentities %j fails at synth, naming the construct", (identities, message) => {
    const stack = new TerraformStack(Testing.app(), "s");
    expect(() => new GpuCloudAccount(stack, "acct", { allowedIdentities: identities })).toThrow(message);
    expect(() => new GpuCloudAccount(stack, "acct2", { allowedIdentities: identities })).toThrow(/GpuCloudAccount "s\/acct2"/);
  });
});
