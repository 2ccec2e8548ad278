/**
 * Every TypeScript example of README.md and docs/ compiles and synthesizes as a reader pastes it,
 * in a fresh project of each flavour: `cdktf init --template=typescript` (cdktf 0.21) and
 * `cdktn init --template=typescript` (CDK Terrain 0.24), with their compiler settings and the
 * feature flags their init writes into cdktf.json. An example is written for one flavour; the
 * other flavour's version is the same code with the imports its comments name swapped
 * (`cdktf` ⇄ `cdktn`, `cdktf-gpucloud` ⇄ `cdktf-gpucloud/cdktn`). A block whose first line starts
 * with `// Fragment` is not a whole program and is left out; every other block must run. An
 * example that reads the scripts' variables from `process.env` (the client's) runs against the
 * emulator, once with each kind of credential, and must reach it.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import ts from "typescript";

import { md5Hex, type RunningEmulator, startEmulator } from "../../src/emulator";
import { CDKTF_INIT_COMPILER_OPTIONS } from "../package/consumer";
import { type MarkdownExample, typescriptExamples, userDocs } from "../support/markdown-examples";
import { runProcess } from "../support/processes";

const root = path.resolve(__dirname, "../..");

type Flavour = "cdktf" | "cdktn";

/**
 * The context each init writes into cdktf.json: cdktf 0.21's FUTURE_FLAGS are empty; cdktn 0.24's
 * (its lib/features.ts) turn on the check that fails synthesis on constructs outside a stack.
 */
const initContext: Record<Flavour, Record<string, string>> = {
  cdktf: {},
  cdktn: { failOnConstructsOutsideOfStacks: "true", canonicalAssetHashes: "true" },
};

/** The compiler settings of the typescript template's tsconfig.json (the same in both CLIs; one home: the packaging tests'). */
const templateCompilerOptions: ts.CompilerOptions = ts.convertCompilerOptionsFromJson(
  { ...CDKTF_INIT_COMPILER_OPTIONS, incremental: false },
  root,
).options;

function inFlavour(code: string, flavour: Flavour): string {
  return flavour === "cdktn"
    ? code.replace(/from "cdktf"/g, 'from "cdktn"').replace(/from "cdktf-gpucloud"/g, 'from "cdktf-gpucloud/cdktn"')
    : code.replace(/from "cdktn"/g, 'from "cdktf"').replace(/from "cdktf-gpucloud\/cdktn"/g, 'from "cdktf-gpucloud"');
}

const usesConstructLibrary = (code: string): boolean => /from "(cdktf|cdktn)"/.test(code);

/** The example takes the API's address and credentials from the variables the scripts read. */
const readsCredentials = (code: string): boolean => /process\.env\b/.test(code) && /GPUCLOUD_/.test(code);

const USER = { username: "docs-reader", password: "docs-example-password" };
let api: RunningEmulator;
let apiToken: string;

/** The kinds of credentials the README's table lists, as a pipeline's environment gives them. */
const CREDENTIAL_KINDS: Record<string, () => NodeJS.ProcessEnv> = {
  "API token": () => ({ GPUCLOUD_API_TOKEN: apiToken }),
  password: () => ({ GPUCLOUD_USERNAME: USER.username, GPUCLOUD_PASSWORD: USER.password }),
  "password md5": () => ({ GPUCLOUD_USERNAME: USER.username, GPUCLOUD_PASSWORD_MD5: md5Hex(USER.password) }),
};

/** A project folder with what the flavour's init installs, this package linked in as a dependency would be. */
function freshProject(flavour: Flavour): string {
  const dir = mkdtempSync(path.join(tmpdir(), `gpucloud-doc-examples-${flavour}-`));
  mkdirSync(path.join(dir, "node_modules", "@types"), { recursive: true });
  for (const dep of [flavour, "constructs", "@types/node"]) {
    symlinkSync(path.join(root, "node_modules", dep), path.join(dir, "node_modules", dep), "dir");
  }
  symlinkSync(root, path.join(dir, "node_modules", "cdktf-gpucloud"), "dir");
  writeFileSync(
    path.join(dir, "cdktf.json"),
    JSON.stringify({ language: "typescript", app: "npx ts-node main.ts", context: initContext[flavour] }),
  );
  return dir;
}

interface Case {
  readonly example: MarkdownExample;
  readonly flavour: Flavour;
  readonly name: string;
  readonly source: string;
  /** The kind of credential it runs with against the emulator (see CREDENTIAL_KINDS), if it reads them. */
  readonly credentials?: string;
}

const examples = userDocs(root).flatMap((file) => typescriptExamples(root, file));
const cases: Case[] = examples
  .filter((e) => !e.fragment)
  .flatMap((example) =>
    (usesConstructLibrary(example.code) ? (["cdktf", "cdktn"] as const) : (["cdktf"] as const)).map((flavour) => ({
      example,
      flavour,
      name: `${example.file}:${example.line} (${flavour})`,
      source: inFlavour(example.code, flavour),
    })),
  )
  .flatMap((c) =>
    readsCredentials(c.source)
      ? Object.keys(CREDENTIAL_KINDS).map((kind) => ({ ...c, name: `${c.name.slice(0, -1)}, ${kind})`, credentials: kind }))
      : [c],
  );

const projects = new Map<Flavour, string>();
const compileErrors = new Map<string, string>();
const fileOf = (c: Case): string =>
  path.join(
    projects.get(c.flavour)!,
    `${c.example.file.replace(/[/.]/g, "-")}-${c.example.line}${c.credentials ? `-${c.credentials.replace(/\W/g, "-")}` : ""}.ts`,
  );

/** One compiler host for all examples, sharing the parsed declaration files of the dependencies. */
function cachingHost(): ts.CompilerHost {
  const host = ts.createCompilerHost(templateCompilerOptions);
  const cache = new Map<string, ts.SourceFile | undefined>();
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError) => {
    // The examples themselves are read afresh; everything they import is parsed once.
    if ([...projects.values()].some((dir) => fileName.startsWith(dir))) return getSourceFile(fileName, languageVersion, onError);
    if (!cache.has(fileName)) cache.set(fileName, getSourceFile(fileName, languageVersion, onError));
    return cache.get(fileName);
  };
  return host;
}

beforeAll(async () => {
  api = await startEmulator({ users: [USER] });
  apiToken = api.addToken({ name: "docs-example" }).token;
  const host = cachingHost();
  const format = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
  for (const flavour of ["cdktf", "cdktn"] as const) projects.set(flavour, freshProject(flavour));
  // Each example is a program of its own, as it would be in a project of its own.
  for (const c of cases) {
    writeFileSync(fileOf(c), c.source);
    const program = ts.createProgram([fileOf(c)], templateCompilerOptions, host);
    const diagnostics = ts.getPreEmitDiagnostics(program);
    if (diagnostics.length > 0) compileErrors.set(c.name, ts.formatDiagnostics(diagnostics, format));
    else program.emit();
  }
}, 120_000);
afterAll(async () => {
  await api?.close();
});

test("the docs have TypeScript examples, and only a few are fragments", () => {
  expect(cases.length).toBeGreaterThan(0);
  // A fragment is code a reader cannot check by pasting it; each one must earn its place.
  expect(examples.filter((e) => e.fragment).map((e) => `${e.file}:${e.line}`).length).toBeLessThanOrEqual(4);
});

test("the client's example is among those run against the emulator", () => {
  expect(cases.filter((c) => c.credentials !== undefined).map((c) => c.example.file)).toContain("docs/client.md");
});

test.each(cases.map((c) => [c.name, c]))("%s compiles and runs as pasted", async (_name, c) => {
  expect(compileErrors.get(c.name) ?? "").toBe("");
  const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-doc-example-out-"));
  // Only the variables the case gives: none of the machine's GPUCLOUD_* reach an example.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("GPUCLOUD_")));
  const credentials = c.credentials === undefined ? {} : { GPUCLOUD_BASE_URL: api.url, ...CREDENTIAL_KINDS[c.credentials]() };
  const before = api.stats();
  // Not spawnSync: the emulator answers from this process, whose event loop must keep running.
  const ran = await runProcess(process.execPath, [fileOf(c).replace(/\.ts$/, ".js")], {
    cwd: projects.get(c.flavour),
    env: { ...env, ...credentials, CDKTF_OUTDIR: outdir, CDKTF_CONTEXT_JSON: JSON.stringify(initContext[c.flavour]) },
  });
  expect(ran.stderr).toBe("");
  expect(ran.code).toBe(0);
  if (c.credentials !== undefined) {
    // It reached the API with the credential it was given: a password logs in, a token does not.
    expect(api.stats().requests).toBeGreaterThan(before.requests);
    expect(api.stats().logins - before.logins).toBe(c.credentials === "API token" ? 0 : 1);
  }
  if (/\.synth\(\)/.test(c.source)) {
    const stacks = path.join(outdir, "stacks");
    const written = existsSync(stacks) ? readdirSync(stacks).filter((s) => existsSync(path.join(stacks, s, "cdk.tf.json"))) : [];
    expect(written.length).toBeGreaterThan(0);
  }
});
