// The packed library in a project made like `cdktf init --template=typescript` makes one: its
// entry points type-check under every module resolution such projects use, and load and
// synthesize from the installed layout (both flavours). Then installed from the registry by the
// README's own lines: a CDK Terrain app gets no cdktf, a cdktf app all it needs.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { markdownBlocks } from "../support/markdown-examples";
import { jobEnv, makeConsumer, packLibrary, REPO, run, typecheck } from "./consumer";

const CDKTF_APP = `import { App, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken, Flavors, type ApiTokenProps } from "cdktf-gpucloud";
import { startEmulator, type RunningEmulator } from "cdktf-gpucloud/emulator";
import { GpuCloudClient } from "cdktf-gpucloud/client";

const props: ApiTokenProps = { name: "ci" };
const app = new App();
const stack = new TerraformStack(app, "s");
const token = new ApiToken(stack, "t", props);
const flavors = new Flavors(stack, "f", { regionId: "r", gpu: "H100" });
new TerraformOutput(stack, "o", { value: flavors.cheapestId });
export const id: string = token.tokenId;
export async function emulator(): Promise<RunningEmulator> {
  return startEmulator({});
}
export const clientClass: typeof GpuCloudClient = GpuCloudClient;
`;

const CDKTN_APP = `import { App, TerraformOutput, TerraformStack } from "cdktn";
import { ApiToken, Flavors } from "cdktf-gpucloud/cdktn";

const app = new App();
const stack = new TerraformStack(app, "s");
const token = new ApiToken(stack, "t", { name: "ci" });
const flavors = new Flavors(stack, "f", { regionId: "r", gpu: "H100" });
new TerraformOutput(stack, "o", { value: flavors.cheapestId });
export const id: string = token.tokenId;
`;

// Proves the check can fail: a name the cdktn entry does not export.
const BROKEN = `import { NoSuchConstruct } from "cdktf-gpucloud/cdktn";
export const x = NoSuchConstruct;
`;

// Module settings users have: cdktf init's (module CommonJS, no moduleResolution, i.e. node10),
// node16, nodenext and bundler.
const RESOLUTIONS: Record<string, Record<string, unknown>> = {
  "cdktf-init (CommonJS, node10)": {},
  node16: { module: "node16", moduleResolution: "node16" },
  nodenext: { module: "nodenext", moduleResolution: "nodenext" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
};

/** The README's install line of each flavour, its comment dropped. */
function readmeInstall(cdk: "cdktf" | "cdktn"): string {
  const block = markdownBlocks(REPO, "README.md").find((b) => b.language === "sh" && b.code.startsWith("npm install cdktf-gpucloud "));
  const line = block?.code.split("\n").find((l) => l.includes(` ${cdk}@`));
  if (!line) throw new Error(`README.md: no "npm install cdktf-gpucloud … ${cdk}@…" line in a sh block`);
  return line.replace(/\s+#.*$/, "");
}

/** Synthesizes an ApiToken and a Flavors with `cdk`'s App from `entry`, in `dir`; the stack's cdk.tf.json. */
function synthesize(dir: string, cdk: "cdktf" | "cdktn", entry: string, outdir: string): Record<string, any> {
  const script = `const { App, TerraformStack } = require(${JSON.stringify(cdk)});
const { ApiToken, Flavors } = require(${JSON.stringify(entry)});
const app = new App({ outdir: ${JSON.stringify(outdir)} });
const stack = new TerraformStack(app, "s");
new ApiToken(stack, "t", { name: "ci" });
new Flavors(stack, "f", { regionId: "r", gpu: "H100" });
app.synth();`;
  run(process.execPath, ["-e", script], dir);
  return JSON.parse(readFileSync(path.join(outdir, "stacks", "s", "cdk.tf.json"), "utf8"));
}

describe("the packed library in a cdktf-init-style project", () => {
  let work: string;
  let consumer: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "gpucloud-pack-"));
    consumer = makeConsumer(packLibrary(work));
    writeFileSync(path.join(consumer, "cdktf-app.ts"), CDKTF_APP);
    writeFileSync(path.join(consumer, "cdktn-app.ts"), CDKTN_APP);
    writeFileSync(path.join(consumer, "broken.ts"), BROKEN);
  }, 120_000);
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(consumer, { recursive: true, force: true });
  });

  test.each(Object.entries(RESOLUTIONS))(
    "tsc --noEmit passes for the main entry, /emulator, /client and /cdktn under %s",
    (name, overrides) => {
      const res = typecheck(consumer, name.replace(/\W+/g, "-"), overrides, ["cdktf-app.ts", "cdktn-app.ts"]);
      expect(`${res.stdout}${res.stderr}`).toBe("");
      expect(res.status).toBe(0);
    },
  );

  test("the check can fail: a missing export is reported", () => {
    const res = typecheck(consumer, "broken", {}, ["broken.ts"]);
    expect(res.status).not.toBe(0);
    expect(res.stdout).toMatch(/TS2305: Module '"cdktf-gpucloud\/cdktn"' has no exported member 'NoSuchConstruct'/);
  });

  test("every entry point loads with node, and every bin runs", () => {
    const res = run(
      process.execPath,
      [
        "-e",
        `for (const m of ["cdktf-gpucloud", "cdktf-gpucloud/cdktn", "cdktf-gpucloud/emulator", "cdktf-gpucloud/client"]) console.log(m, Object.keys(require(m)).sort().join(","))`,
      ],
      consumer,
    );
    expect(res.stdout).toMatch(/^cdktf-gpucloud \S*ApiToken\S*Flavors/m);
    expect(res.stdout).toMatch(/^cdktf-gpucloud\/cdktn \S*ApiToken\S*Flavors/m);
    expect(res.stdout).toMatch(/^cdktf-gpucloud\/emulator \S*startEmulator/m);
    expect(res.stdout).toMatch(/^cdktf-gpucloud\/client \S*GpuCloudClient/m);
    // Every bin runs from the installed package (so nothing it imports was left out of the tarball).
    const installed = path.join(consumer, "node_modules", "cdktf-gpucloud");
    const bins = (JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as { bin: Record<string, string> }).bin;
    expect(Object.keys(bins)).toContain("gpucloud-emulator");
    for (const [name, file] of Object.entries(bins)) {
      const help = run(process.execPath, [path.join(installed, file), "--help"], consumer);
      expect([name, help.stdout]).toEqual([name, expect.stringMatching(/^Usage: /)]);
    }
  });

  test.each([
    ["cdktf", "cdktf-gpucloud"],
    ["cdktn", "cdktf-gpucloud/cdktn"],
  ] as const)("a %s app synthesizes from the installed package, the runtime script copied into the stack", (cdk, entry) => {
    const outdir = path.join(consumer, `out-${cdk}`);
    const json = synthesize(consumer, cdk, entry, outdir);
    const stackDir = path.join(outdir, "stacks", "s");
    // The token's sync resource and the stack's token roster.
    expect(Object.keys(json.resource).sort()).toEqual(["null_resource", "terraform_data"]);
    expect(Object.keys(json.data)).toEqual(["external"]);
    expect(Object.keys(json.provider).sort()).toEqual(["external", "null"]);
    const assets = path.join(stackDir, "assets");
    const found = readdirSync(assets, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith("gpucloud-tf.js"));
    expect(found).toHaveLength(1);
    expect(existsSync(path.join(assets, found[0]))).toBe(true);
  });
});

describe("a cdktf app without the prebuilt provider packages (optional peers)", () => {
  let work: string;
  let consumer: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "gpucloud-pack-"));
    consumer = makeConsumer(packLibrary(work), ["@cdktf/provider-null", "@cdktf/provider-external"]);
  }, 120_000);
  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(consumer, { recursive: true, force: true });
  });

  test("is told the command that installs them: the README's cdktf line, less the library", () => {
    const res = spawnNode(consumer, `require("cdktf-gpucloud")`);
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("cdktf-gpucloud: @cdktf/provider-null is not installed.");
    // The whole command, as the message ends it.
    expect(res.stderr).toContain(`: ${readmeInstall("cdktf").replace(/^npm install cdktf-gpucloud /, "npm install ")}. `);
  });

  test("while the CDK Terrain entry, which needs neither, loads", () => {
    const res = spawnNode(consumer, `console.log(typeof require("cdktf-gpucloud/cdktn").ApiToken)`);
    expect([res.status, res.stdout.trim()]).toEqual([0, "function"]);
  });
});

/** `node -e code` in `dir`, whatever its exit. */
function spawnNode(dir: string, code: string) {
  return spawnSync(process.execPath, ["-e", code], { cwd: dir, encoding: "utf8", timeout: 60_000 });
}

// From the npm registry (npm's cache first, as `npm ci` left it), as a user installs: each line in
// a fresh project, the library's name replaced by its tarball.
describe("installed by the README's install lines", () => {
  let work: string;
  let tarball: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "gpucloud-install-"));
    tarball = packLibrary(work);
  }, 120_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** A fresh project in which the README's line for `cdk` ran. */
  function installed(cdk: "cdktf" | "cdktn"): string {
    const dir = path.join(work, cdk);
    mkdirSync(dir);
    writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ name: "app", version: "1.0.0", private: true })}\n`);
    const line = readmeInstall(cdk).replace(/^npm install cdktf-gpucloud /, `npm install ${tarball} `);
    run("bash", ["-c", line], dir, jobEnv());
    return dir;
  }

  test("a CDK Terrain app: no cdktf (nor the @cdktf providers that need it), and it synthesizes", () => {
    const dir = installed("cdktn");
    expect(readdirSync(path.join(dir, "node_modules")).filter((n) => /cdktf(?!-gpucloud)/.test(n))).toEqual([]);
    const json = synthesize(dir, "cdktn", "cdktf-gpucloud/cdktn", path.join(dir, "cdktf.out"));
    expect(Object.keys(json.provider).sort()).toEqual(["external", "null"]);
  });

  test("a cdktf app: one line installs what it needs, and it synthesizes", () => {
    const dir = installed("cdktf");
    const json = synthesize(dir, "cdktf", "cdktf-gpucloud", path.join(dir, "cdktf.out"));
    expect(Object.keys(json.provider).sort()).toEqual(["external", "null"]);
  });
});
