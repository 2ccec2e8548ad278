/**
 * The README stays a user's ten-minute read that opens with the two commands that work on a fresh
 * machine, and no link between the README, CONTRIBUTING.md and docs/ points at a file or a heading
 * that is gone (the depth moved to docs/, so a renamed heading would otherwise break silently).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(__dirname, "../..");
const read = (rel: string): string => readFileSync(path.join(root, rel), "utf8");

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Anchors of a markdown file's headings (outside code fences), with GitHub's -1, -2 for repeats. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links `[text](target)` outside code fences and inline code. */
function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z]+:/i.test(m[1])) out.push(m[1]);
    }
  }
  return out;
}

const markdownFiles = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("README", () => {
  const readme = read("README.md");
  const lines = readme.split("\n");

  test("opens with the demo and test commands, right after the title", () => {
    expect(lines[0]).toBe("# cdktf-gpucloud");
    const firstBlock = lines.slice(1, 6).filter((l) => l.trim() !== "");
    expect(firstBlock[0]).toBe("```sh");
    expect(firstBlock[1]).toMatch(/^npm ci && npm run demo\s+#/);
    expect(firstBlock[2]).toMatch(/^npm ci && npm test\s+#/);
    expect(firstBlock[3]).toBe("```");
  });

  test("is at most 250 lines", () => {
    expect(lines.length).toBeLessThanOrEqual(250);
  });

  test("has its sections in the order a user reads them", () => {
    const sections = lines.filter((l) => l.startsWith("## ")).map((l) => l.slice(3));
    const wanted = [
      "Install",
      "Example",
      "Credentials and accounts",
      "`ApiToken`",
      "`Flavors`",
      "`FlavorPreference`",
      "Pipeline usage",
      "Limits",
      "Links",
    ];
    const positions = wanted.map((w) => sections.indexOf(w));
    expect(positions).not.toContain(-1);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });
});

describe("links between the README, CONTRIBUTING.md and docs/", () => {
  test.each(markdownFiles)("every relative link in %s reaches a file and a heading", (file) => {
    const broken: string[] = [];
    for (const link of relativeLinks(read(file))) {
      const [target, anchor] = link.split("#", 2);
      const resolved = target === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      if (!existsSync(path.join(root, resolved))) {
        broken.push(`${link}: no file ${resolved}`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith(".md") && !anchors(read(resolved)).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${resolved}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
