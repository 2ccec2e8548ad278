import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { NullProvider } from "@cdktf/provider-null/lib/provider";
import { App, TerraformOutput, TerraformStack, Testing } from "cdktf";
import { ApiToken } from "../../src";

/** Synthesizes one stack and returns its parsed cdk.tf.json. */
function synth(build: (stack: TerraformStack) => void): any {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

function only<T>(record: Record<string, T> | undefined): T {
  const values = Object.values(record ?? {});
  expect(values).toHaveLength(1);
  return values[0];
}

describe("ApiToken synthesis", () => {
  test("declares the observe / sync / read trio wired to the bundled script", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci-pipeline", description: "for CI" }));

    const sync = only<any>(json.resource.null_resource);
    expect(sync.triggers).toMatchObject({ name: "ci-pipeline", description: "for CI" });
    expect(sync.triggers.key).toMatch(/^[0-9a-f]{42}$/);
    // Unknown at plan only when the observation says the API differs.
    expect(sync.triggers.api_in_sync).toContain('(data.external.ci_observe_');
    expect(sync.triggers.api_in_sync).toContain('result["in_sync"] == "true") ? "true" : (timestamp() == "never") ? "never" : "true"');
    expect(sync.triggers.api_in_sync).not.toContain("undefined");

    const [create, destroy] = sync.provisioner.map((p: any) => p["local-exec"]);
    expect(create.command).toMatch(/^node \.\/assets\/gpucloud-runtime\/[0-9A-F]+\/gpucloud-tf\.js token-apply$/);
    expect(create.when).toBeUndefined();
    expect(create.environment).toEqual({
      GPUCLOUD_TOKEN_NAME: "ci-pipeline",
      GPUCLOUD_TOKEN_DESCRIPTION: "for CI",
      GPUCLOUD_TOKEN_KEY: sync.triggers.key,
    });
    expect(destroy.when).toBe("destroy");
    expect(destroy.command).toMatch(/gpucloud-tf\.js token-release$/);
    // Destroy-time provisioners may only reference self.
    expect(destroy.environment).toEqual({
      GPUCLOUD_TOKEN_NAME: "${self.triggers.name}",
      GPUCLOUD_TOKEN_KEY: "${self.triggers.key}",
    });

    const externals = json.data.external;
    const observe = Object.entries<any>(externals).find(([k]) => k.includes("observe"))![1];
    const read = Object.entries<any>(externals).find(([k]) => k.includes("read"))![1];
    expect(observe.program).toEqual(["node", expect.stringMatching(/^\.\/assets\/.*gpucloud-tf\.js$/), "token-observe"]);
    expect(observe.query).toEqual({ name: "ci-pipeline", description: "for CI" });
    expect(read.program[2]).toBe("token-read");
    expect(read.query).toEqual({ name: "ci-pipeline" });
    expect(read.depends_on).toEqual([expect.stringMatching(/^null_resource\.ci_sync_/)]);

    expect(json.provider.null).toBeDefined();
    expect(json.provider.external).toBeDefined();
  });

  test("leaves the description unmanaged when it is not given", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci" }));
    const sync = only<any>(json.resource.null_resource);
    expect(sync.triggers).not.toHaveProperty("description");
    expect(sync.provisioner[0]["local-exec"].environment).not.toHaveProperty("GPUCLOUD_TOKEN_DESCRIPTION");
    for (const data of Object.values<any>(json.data.external)) expect(data.query).not.toHaveProperty("description");
  });

  test("passes baseUrl to every script, the destroy side through the triggers", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci", baseUrl: "https://api.example.test/v1" }));
    const sync = only<any>(json.resource.null_resource);
    expect(sync.triggers.base_url).toBe("https://api.example.test/v1");
    expect(sync.provisioner[0]["local-exec"].environment.GPUCLOUD_BASE_URL).toBe("https://api.example.test/v1");
    expect(sync.provisioner[1]["local-exec"].environment.GPUCLOUD_BASE_URL).toBe("${self.triggers.base_url}");
    for (const data of Object.values<any>(json.data.external)) {
      expect(data.query.base_url).toBe("https://api.example.test/v1");
    }
  });

  test("exposes attributes from the post-write read, the token wrapped in sensitive()", () => {
    const json = synth((stack) => {
      const token = new ApiToken(stack, "ci", { name: "ci" });
      new TerraformOutput(stack, "id", { value: token.tokenId });
      new TerraformOutput(stack, "token", { value: token.token, sensitive: true });
      new TerraformOutput(stack, "created", { value: token.createdAt });
      new TerraformOutput(stack, "used", { value: token.lastUsed });
    });
    expect(json.output.id.value).toMatch(/^\$\{data\.external\.ci_read_[0-9A-F]+\.result\["id"\]\}$/);
    expect(json.output.token.value).toMatch(/^\$\{sensitive\(data\.external\.ci_read_[0-9A-F]+\.result\["token"\]\)\}$/);
    expect(json.output.token.sensitive).toBe(true);
    expect(json.output.created.value).toContain('tonumber(data.external.ci_read_');
    expect(json.output.used.value).toContain('result["last_used"]');
  });

  test("gives each token its own key, and shares one provider and one script per stack", () => {
    const json = synth((stack) => {
      new ApiToken(stack, "a", { name: "a" });
      new ApiToken(stack, "b", { name: "b" });
    });
    const keys = Object.values<any>(json.resource.null_resource).map((r) => r.triggers.key);
    expect(new Set(keys).size).toBe(2);
    expect(Object.keys(json.provider.null)).toHaveLength(1);
    const commands = new Set(
      Object.values<any>(json.resource.null_resource).map((r) => r.provisioner[0]["local-exec"].command.split(" ")[1]),
    );
    expect(commands.size).toBe(1);
  });

  test("reuses a NullProvider the stack already declares", () => {
    const json = synth((stack) => {
      new NullProvider(stack, "mine");
      new ApiToken(stack, "ci", { name: "ci" });
    });
    expect(json.provider.null).toHaveLength(1);
  });

  describe("rejects bad props at synth time, naming the construct and the limit", () => {
    const cases: Array<[string, any, RegExp]> = [
      ["a 51-character name", { name: "x".repeat(51) }, /ApiToken "test\/ci": name must be 1 to 50 characters .*got 51/],
      ["an empty name", { name: "" }, /ApiToken "test\/ci": name must be 1 to 50 characters .*got 0/],
      ["a missing name", {}, /ApiToken "test\/ci": name is required/],
      ["a non-string description", { name: "ci", description: 42 }, /description must be a string/],
      ["a baseUrl with credentials", { name: "ci", baseUrl: "https://u:p@api.example.test" }, /baseUrl must not contain credentials/],
      ["a baseUrl that is not http", { name: "ci", baseUrl: "ftp://api.example.test" }, /baseUrl must be an http/],
    ];
    test.each(cases)("%s", (_label, props, message) => {
      expect(() => synth((stack) => new ApiToken(stack, "ci", props))).toThrow(message);
    });

    test("50 characters are counted as characters, not UTF-16 units", () => {
      expect(() => synth((stack) => new ApiToken(stack, "ci", { name: "🚀".repeat(50) }))).not.toThrow();
      expect(() => synth((stack) => new ApiToken(stack, "ci", { name: "🚀".repeat(51) }))).toThrow(/got 51/);
    });
  });
});

describe("ApiToken full synthesis", () => {
  test("copies the script into the stack folder and writes no secret into it", () => {
    const secrets = {
      GPUCLOUD_USERNAME: "synth-user-7d1f",
      GPUCLOUD_PASSWORD: "synth-password-3b9a1c",
      GPUCLOUD_PASSWORD_MD5: "0123456789abcdef0123456789abcdef",
      GPUCLOUD_API_TOKEN: "eyJhbGciOiJIUzI1NiJ9.synth-api-token.sig",
    };
    const saved = { ...process.env };
    Object.assign(process.env, secrets);
    let outdir: string;
    try {
      const app = new App({ outdir: Testing.app().outdir, skipValidation: false });
      const stack = new TerraformStack(app, "secretless");
      const token = new ApiToken(stack, "ci", { name: "ci", description: "d" });
      new TerraformOutput(stack, "token", { value: token.token, sensitive: true });
      app.synth();
      outdir = app.outdir;
    } finally {
      process.env = saved;
    }
    const stackDir = path.join(outdir, "stacks", "secretless");
    const config = readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8");
    for (const value of Object.values(secrets)) expect(config).not.toContain(value);

    const assetRoot = path.join(stackDir, "assets", "gpucloud-runtime");
    const [hash] = readdirSync(assetRoot);
    const script = readFileSync(path.join(assetRoot, hash, "gpucloud-tf.js"), "utf8");
    expect(script.startsWith("#!/usr/bin/env node")).toBe(true);
    expect(config).toContain(`./assets/gpucloud-runtime/${hash}/gpucloud-tf.js`);
  });
});
