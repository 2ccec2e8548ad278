/**
 * Every `npx` a reader copies from the README, docs/ or CONTRIBUTING.md runs in a CI job as
 * printed: one that downloads a CLI says `--yes` (without a terminal npx cancels instead: "npx
 * canceled due to missing packages and no YES option") and pins its version, so that every job
 * runs the same CLI; one that runs a bin the project installs (this package's, a devDependency's)
 * says no `--yes`, which outside such a project would download whatever package has that name.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { markdownBlocks, userDocs } from "../support/markdown-examples";

const root = path.resolve(__dirname, "../..");
const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** What a reader copies: code blocks whole, and inline code in the prose (which may wrap). */
function copiedText(file: string): string[] {
  const blocks = markdownBlocks(root, file).map((b) => b.code);
  const prose = readFileSync(path.join(root, file), "utf8").replace(/^```[\s\S]*?^```/gm, "");
  return [...blocks, ...[...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1])];
}

/** What is wrong with each `npx` in `text`, given the bins installed locally. */
function npxProblems(text: string, localBins: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(/\bnpx((?:\s+-[-\w]+)*)\s+([^\s`]+)/g)) {
    const flags = m[1].trim().split(/\s+/).filter(Boolean);
    const spec = m[2];
    const yes = flags.includes("--yes") || flags.includes("-y");
    const name = spec.replace(/(.)@.*$/, "$1");
    if (localBins.has(name)) {
      if (yes) problems.push(`${m[0]}: ${name} is a bin the project installs; --yes would download a package of that name elsewhere`);
    } else {
      if (!yes) problems.push(`${m[0]}: downloads ${name} without --yes, which a job without a terminal cancels`);
      if (!/.@\d/.test(spec)) problems.push(`${m[0]}: downloads ${name} without a pinned version`);
    }
  }
  return problems;
}

const ownBins = new Set(Object.keys(manifest.bin));
const docs = userDocs(root);

test("the check finds an npx that would prompt, an unpinned download and --yes on a local bin; and passes the good forms", () => {
  expect(npxProblems("npx cdktn-cli@0.24 synth", ownBins)).toEqual([
    "npx cdktn-cli@0.24: downloads cdktn-cli without --yes, which a job without a terminal cancels",
  ]);
  expect(npxProblems("npx --yes cdktn-cli synth", ownBins)).toEqual(["npx --yes cdktn-cli: downloads cdktn-cli without a pinned version"]);
  expect(npxProblems("npx --yes gpucloud flavors", ownBins)).toHaveLength(1);
  expect(npxProblems("npx --yes cdktn-cli@0.24 synth; npx -y cdktf-cli@0.21 synth; npx gpucloud flavors", ownBins)).toEqual([]);
});

test.each(docs)("every npx in %s runs without a terminal", (file) => {
  expect(copiedText(file).flatMap((text) => npxProblems(text, ownBins))).toEqual([]);
});

test("every npx in CONTRIBUTING.md runs without a terminal (devDependencies are installed bins there)", () => {
  const installed = new Set([...ownBins, ...Object.keys(manifest.devDependencies)]);
  expect(copiedText("CONTRIBUTING.md").flatMap((text) => npxProblems(text, installed))).toEqual([]);
});

test("the docs do use npx both ways (the checks above have something to check)", () => {
  const all = docs.flatMap(copiedText).join("\n");
  expect(all).toMatch(/npx --yes cdktn-cli@0\.24 /);
  expect(all).toMatch(/npx gpucloud /);
});
