/**
 * The command blocks of the README and docs/ run as printed, in a CI-like shell (no terminal, no
 * npm configuration of this repository, none of the machine's GPUCLOUD_*), in a fresh project
 * that installs the packed library with the README's own install lines. A block that cannot run
 * offline (Terraform, a CLI downloaded from the registry, the repository's own commands) is named
 * with the reason below, and a new block must either run or be given one. Only placeholders
 * change: a package's tarball for its name in `npm install`, `export NAME=…` values, the port.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { closedPort } from "../support/closed-port";
import { type MarkdownBlock, markdownBlocks, userDocs } from "../support/markdown-examples";
import { runProcess } from "../support/processes";
import { jobEnv, packLibrary, REPO } from "./consumer";

/** Lines that cannot run here, and why; a block with one of them is not run. */
const NOT_RUN: readonly (readonly [RegExp, string])[] = [
  [/^npm ci && npm (run demo|test)\b/, "the repository's own commands, in its checkout: .ci/run runs them"],
  [
    /\bnpx --yes (cdktn-cli|cdktf-cli)@/,
    "downloads the CLI from the registry (cdktn-cli 0.24: 217 MB, and Node 22.19 or later), then runs Terraform; " +
      "test/terraform/cdktf-cli.test.ts runs cdktf-cli 0.21's synth, deploy and destroy",
  ],
  [/\bterraform (init|plan|apply)\b/, "Terraform with the real providers: test/terraform runs these steps on the provider doubles"],
];

const SHELL = new Set(["sh", "bash", "shell"]);
const blocks = userDocs(REPO)
  .flatMap((file) => markdownBlocks(REPO, file).map((b, i, all) => ({ ...b, next: all[i + 1] })))
  .filter((b) => SHELL.has(b.language));
const reasons = (b: MarkdownBlock): string[] =>
  NOT_RUN.filter(([pattern]) => b.code.split("\n").some((l) => pattern.test(l.trim()))).map(([, why]) => why);
const runnable = blocks.filter((b) => reasons(b).length === 0);
const name = (b: MarkdownBlock) => `${b.file}:${b.line}`;

describe("the docs' command blocks, in a fresh project", () => {
  let work: string;
  let project: string;
  let tarball: string;
  let api: RunningEmulator;
  let values: Record<string, string>;
  let port: number;
  const outputs = new Map<string, string>();

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), "gpucloud-doc-commands-"));
    tarball = packLibrary(work);
    project = path.join(work, "project");
    mkdirSync(project);
    writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "app", version: "1.0.0", private: true })}\n`);
    api = await startEmulator({ users: [{ username: "ci", password: "doc-commands-password" }] });
    values = { GPUCLOUD_BASE_URL: api.url, GPUCLOUD_API_TOKEN: api.addToken({ name: "ci" }).token };
    port = await closedPort();
  });
  afterAll(async () => {
    await api?.close();
    rmSync(work, { recursive: true, force: true });
  });

  test("every reason not to run stands for a block of today's docs, and the README's install runs first", () => {
    for (const [pattern, why] of NOT_RUN) {
      expect([why, blocks.some((b) => b.code.split("\n").some((l) => pattern.test(l.trim())))]).toEqual([why, true]);
    }
    expect(name(runnable[0])).toMatch(/^README\.md:/);
    expect(runnable[0].code).toMatch(/^npm install cdktf-gpucloud /);
    expect(runnable.length).toBeGreaterThanOrEqual(3);
  });

  /** The block as printed, but for its placeholders. */
  function asRun(b: MarkdownBlock): string {
    return b.code
      .replace(/^(npm install )cdktf-gpucloud(?=\s)/gm, `$1${tarball}`)
      .replace(/\b([A-Z][A-Z0-9_]*)=…/g, (_m, variable: string) => {
        if (values[variable] === undefined) throw new Error(`${name(b)}: no value for ${variable}`);
        return `${variable}=${values[variable]}`;
      })
      .replace(/\b8080\b/g, String(port));
  }

  // In the order a reader meets them: the README's install first. Sequential, in one project.
  test.each(runnable.map((b) => [name(b), b] as const))("%s runs without a terminal and exits 0", async (label, b) => {
    const script = path.join(work, `${label.replace(/\W/g, "-")}.sh`);
    // The harness's own lines: stop at the first failure, and leave no background process behind.
    writeFileSync(script, `set -e\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${asRun(b)}`);
    const ran = await runProcess("bash", [script], { cwd: project, env: jobEnv() });
    outputs.set(label, ran.stdout);
    expect([label, ran.code, ran.code === 0 ? "" : ran.stderr]).toEqual([label, 0, ""]);
    // A block followed by its output prints that output.
    if (b.next?.language === "text") expect(ran.stdout.trimEnd()).toBe(b.next.code.trimEnd());
  });

  test("the emulator's state is the envelope docs/emulator.md shows: the same fields, of the same types", () => {
    const [label, printed] = [...outputs].find(([l]) => l.startsWith("docs/emulator.md:"))!;
    const shown = markdownBlocks(REPO, "docs/emulator.md").find((b) => b.language === "json")!;
    expect([label, shape(JSON.parse(printed))]).toEqual([label, shape(JSON.parse(shown.code))]);
    expect(JSON.parse(printed)).toMatchObject({ status: true, message: "emulator state" });
  });
});

/** A JSON value's fields and their types, the first item standing for an array's. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
  }
  return value === null ? "null" : typeof value;
}
