/**
 * Which Node each machine needs is said in the README's install section and docs/pipelines.md,
 * and both say what is true of the code: the lines CI tests the script on (.ci/run), the line the
 * script warns below (src/runtime/io/node-line.ts) and the package's `engines`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { OLDEST_TESTED_NODE_LINE } from "../../src/runtime/io/node-line";

const root = path.resolve(__dirname, "../..");
const read = (rel: string): string => readFileSync(path.join(root, rel), "utf8");

/** cdktn-cli 0.24's own `engines` (`npm view cdktn-cli@0.24 engines`), which the docs quote. */
const CDKTN_CLI_ENGINES = ">=22.19.0";

const engines = (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node;

/** The Node lines of every `for line in …` loop of .ci/run: the script's tests and the suites run on these. */
function ciLines(): number[] {
  const loops = [...read(".ci/run").matchAll(/^for line in ([\d ]+); do/gm)].map((m) => m[1].trim());
  expect(loops.length).toBeGreaterThanOrEqual(2);
  expect(new Set(loops).size).toBe(1);
  return loops[0].split(/\s+/).map(Number);
}

const install = read("README.md").split("\n## Install\n")[1].split("\n## ")[0];
const pipelines = read("docs/pipelines.md");

test("the tested lines are .ci/run's, the oldest is the script's warning line and the package's engines", () => {
  const lines = ciLines();
  expect(lines[0]).toBe(OLDEST_TESTED_NODE_LINE);
  expect(engines).toBe(`>=${lines[0]}`);
  const phrase = `Node ${lines.slice(0, -1).join(", ")} or ${lines[lines.length - 1]}`;
  expect(install).toContain(`**${phrase}**`);
  expect(pipelines).toContain(phrase);
  expect(read("docs/operations.md")).toContain(`Tested: Node ${lines.slice(0, -1).join(", ")} and ${lines[lines.length - 1]}.`);
});

test("the machine that synthesizes: cdktn-cli's engines and this package's, the same in the README and pipelines.md", () => {
  const cdktnLine = CDKTN_CLI_ENGINES.replace(/^>=(\d+\.\d+)\.0$/, "$1");
  for (const [file, text] of [
    ["README.md", install],
    ["docs/pipelines.md", pipelines],
  ]) {
    expect([file, text.includes(`\`${CDKTN_CLI_ENGINES}\``), text.includes(`${cdktnLine} or later`)]).toEqual([file, true, true]);
    expect([file, text.includes(`this package's \`engines\``), text.includes(`\`${engines}\``)]).toEqual([file, true, true]);
  }
});

test("the README says how to synthesize on an older Node: npx fetches the oldest tested line, which meets cdktn-cli's engines", () => {
  // npx's `-p` runs the bins of both packages with node@N's first on PATH, so cdktn-cli and the app run on N.
  const m = /`npx --yes -p node@(\d+) -p cdktn-cli@([\d.]+) -- cdktn synth`/.exec(install);
  expect(m?.[1]).toBe(String(OLDEST_TESTED_NODE_LINE));
  expect(Number(m?.[1])).toBeGreaterThanOrEqual(Number(CDKTN_CLI_ENGINES.replace(/^>=(\d+)\..*$/, "$1")));
  expect(install).toContain(`with cdktn-cli ${m?.[2]} (its \`engines\``);
});
