// The CDK Terrain flavour: the same constructs, synthesized by a cdktn app, give the same
// Terraform JSON as the cdktf flavour; and scripts/build-cdktn.mjs derives it from whatever
// lib/ holds, new construct files included.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import * as cdktf from "cdktf";
import * as cdktfFlavour from "cdktf-gpucloud";
import * as cdktnFlavour from "cdktf-gpucloud/cdktn";
import * as cdktn from "cdktn";

const REPO = path.resolve(__dirname, "..", "..");

type Json = Record<string, any>;

/**
 * cdk.tf.json without what differs by design: the "//" metadata (construct paths, cdk version)
 * and the asset folders' hashes (cdktf and cdktn hash the same file differently): the runtime
 * script's and the token writer's inputs'.
 */
function normalized(json: Json): Json {
  const text = JSON.stringify(json, (key, value) => (key === "//" ? undefined : value));
  return JSON.parse(text.replace(/(assets\/[\w.-]+\/)[0-9A-F]{32}\//g, "$1<hash>/")) as Json;
}

function synthCdktf(): Json {
  const stack = new cdktf.TerraformStack(cdktf.Testing.app(), "gpu-ci");
  const flavors = new cdktfFlavour.Flavors(stack, "h100", {
    regionId: "norway-east-1",
    gpu: "H100",
    gpuCount: 1,
    inStockOnly: true,
    spot: false,
  });
  const token = new cdktfFlavour.ApiToken(stack, "ci-token", { name: "ci", description: "CI" });
  new cdktf.TerraformOutput(stack, "flavor_id", { value: flavors.cheapestId });
  new cdktf.TerraformOutput(stack, "token", { value: token.token, sensitive: true });
  return JSON.parse(cdktf.Testing.synth(stack)) as Json;
}

function synthCdktn(): Json {
  const stack = new cdktn.TerraformStack(cdktn.Testing.app(), "gpu-ci");
  const flavors = new cdktnFlavour.Flavors(stack, "h100", {
    regionId: "norway-east-1",
    gpu: "H100",
    gpuCount: 1,
    inStockOnly: true,
    spot: false,
  });
  const token = new cdktnFlavour.ApiToken(stack, "ci-token", { name: "ci", description: "CI" });
  new cdktn.TerraformOutput(stack, "flavor_id", { value: flavors.cheapestId });
  new cdktn.TerraformOutput(stack, "token", { value: token.token, sensitive: true });
  return JSON.parse(cdktn.Testing.synth(stack)) as Json;
}

describe("cdktf-gpucloud/cdktn in a cdktn app", () => {
  test("declares null_resource, the token roster's terraform_data, data external and both providers, like the cdktf flavour", () => {
    const json = synthCdktn();
    expect(Object.keys(json.resource).sort()).toEqual(["null_resource", "terraform_data"]);
    expect(Object.keys(json.data)).toEqual(["external"]);
    expect(json.provider).toEqual({ external: [{}], null: [{}] });
    expect(json.terraform.required_providers).toEqual({
      external: { source: "external", version: "2.3.5" },
      null: { source: "null", version: "3.2.4" },
    });
    expect(JSON.stringify(normalized(json))).toContain("gpucloud-runtime/<hash>/gpucloud-tf.js");
    expect(normalized(json)).toEqual(normalized(synthCdktf()));
  });

  test("its constructs are cdktn constructs, not cdktf ones", () => {
    const stack = new cdktn.TerraformStack(cdktn.Testing.app(), "s");
    new cdktnFlavour.ApiToken(stack, "t", { name: "ci" });
    // Synthesize first: the library adds its default providers when the stack is synthesized.
    cdktn.Testing.synth(stack);
    const kinds = stack.node
      .findAll()
      .map((c) => [
        c.node.path,
        cdktn.TerraformElement.isTerraformElement(c) ? "cdktn" : "",
        cdktf.TerraformElement.isTerraformElement(c) ? "cdktf" : "",
      ]);
    const elements = kinds.filter(([, n, f]) => n || f);
    expect(elements.length).toBeGreaterThan(3);
    // Each library marks its elements with its own symbol: all of ours carry cdktn's.
    expect(elements.every(([, n]) => n === "cdktn")).toBe(true);
  });

  test("no file of the derived flavour imports cdktf or an @cdktf package", () => {
    const dir = path.join(REPO, "lib-cdktn");
    const files = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => /\.(js|d\.ts)$/.test(f));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const text = readFileSync(path.join(dir, f), "utf8");
      expect([f, /(require\(|from )["'](cdktf|@cdktf\/[^"']*)["']/.exec(text)?.[0]]).toEqual([f, undefined]);
    }
  });

  describe("ephemeralToken", () => {
    const ephemeralStack = <S>(lib: typeof cdktn | typeof cdktf, flavour: typeof cdktnFlavour, context?: object) => {
      const stack = new lib.TerraformStack(lib.Testing.app({ context } as never), "s");
      const token = new flavour.ApiToken(stack as never, "t", { name: "ci", valueInState: false });
      void token.ephemeralToken;
      return { stack, token } as unknown as { stack: S; token: InstanceType<typeof cdktnFlavour.ApiToken> };
    };

    test("is a TerraformEphemeralResource; the same block as the cdktf flavour writes into the stack's JSON", () => {
      const { stack, token } = ephemeralStack<cdktn.TerraformStack>(cdktn, cdktnFlavour, { targetVersions: { terraform: ">=1.10.0" } });
      void token;
      const element = stack.node.findAll().find((c) => c.node.id === "values");
      expect(cdktn.TerraformEphemeralResource.isTerraformEphemeralResource(element)).toBe(true);
      const json = JSON.parse(cdktn.Testing.synth(stack)) as Json;
      const ofCdktf = JSON.parse(cdktf.Testing.synth(ephemeralStack<cdktf.TerraformStack>(cdktf, cdktfFlavour as never).stack)) as Json;
      const body = (j: Json) => normalized(Object.values<Json>(j.ephemeral.local_command)[0]);
      expect(body(json)).toEqual(body(ofCdktf));
      expect(json.terraform.required_version).toBe(">= 1.10.0");
      expect(json.terraform.required_providers.local).toEqual({ source: "local", version: "2.7.0" });
    });

    test("without targetVersions admitting Terraform 1.10, CDK Terrain's synthesis fails naming the version needed", () => {
      const { stack } = ephemeralStack<cdktn.TerraformStack>(cdktn, cdktnFlavour);
      expect(() => cdktn.Testing.synth(stack, true)).toThrow(/ephemeral resources requires terraform >=1\.10\.0/);
    });
  });
});

describe("scripts/build-cdktn.mjs", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "gpucloud-cdktn-build-"));
    cpSync(path.join(REPO, "lib"), path.join(root, "lib"), { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const build = () =>
    spawnSync(process.execPath, [path.join(REPO, "scripts", "build-cdktn.mjs"), "--root", root], { encoding: "utf8", timeout: 60_000 });

  /** Adds lib/constructs/extra.{js,d.ts} importing `spec`, exported from lib/constructs/index. */
  function addConstructFile(spec: string): void {
    const dir = path.join(root, "lib", "constructs");
    writeFileSync(
      path.join(dir, "extra.js"),
      `"use strict";\nconst x = require("${spec}");\nconst cdktf_1 = require("cdktf");\nexports.Extra = [x, cdktf_1];\n`,
    );
    writeFileSync(path.join(dir, "extra.d.ts"), `import { TerraformStack } from "cdktf";\nexport declare const Extra: TerraformStack[];\n`);
    for (const ext of [".js", ".d.ts"]) {
      const index = path.join(dir, `index${ext}`);
      const line = ext === ".js" ? `__exportStar(require("./extra"), exports);\n` : `export * from "./extra";\n`;
      writeFileSync(index, readFileSync(index, "utf8") + line);
    }
  }

  test("picks up a construct file added to lib/constructs, rewriting its imports", () => {
    addConstructFile("@cdktf/provider-null/lib/resource");
    const res = build();
    expect(res.stderr).toBe("");
    expect(res.status).toBe(0);
    const js = readFileSync(path.join(root, "lib-cdktn", "constructs", "extra.js"), "utf8");
    expect(js).toContain(`require("../cdktn-bindings/null/resource")`);
    expect(js).toContain(`require("cdktn")`);
    expect(readFileSync(path.join(root, "lib-cdktn", "constructs", "extra.d.ts"), "utf8")).toContain(`from "cdktn"`);
  });

  test("fails, naming the binding to write, for a provider module without one", () => {
    addConstructFile("@cdktf/provider-null/lib/data-null-data-source");
    const res = build();
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain(
      `lib/constructs/extra.js imports "@cdktf/provider-null/lib/data-null-data-source", which has no cdktn binding: add src/cdktn-bindings/null/data-null-data-source.ts`,
    );
  });

  test("fails for any other @cdktf package", () => {
    addConstructFile("@cdktf/provider-aws/lib/instance");
    const res = build();
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain(`imports "@cdktf/provider-aws/lib/instance": the cdktn flavour cannot depend on @cdktf packages`);
    expect(existsSync(path.join(root, "lib-cdktn", "constructs", "extra.js"))).toBe(false);
  });
});
