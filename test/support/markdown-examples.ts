// The TypeScript examples of the user docs, as a reader copies them: every ```ts / ```typescript
// block of README.md and docs/*.md, with where it starts, so a failure names the line to fix.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface MarkdownExample {
  /** The markdown file, relative to the repository root. */
  readonly file: string;
  /** The 1-based line of the block's first code line. */
  readonly line: number;
  readonly code: string;
  /** The block says on its first line that it is not a whole program (`// Fragment…`). */
  readonly fragment: boolean;
}

/** A block that cannot run as pasted says so where the reader sees it: its first line. */
export const FRAGMENT_MARKER = /^\/\/ Fragment\b/;

export function userDocs(root: string): string[] {
  const docs = readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

export function typescriptExamples(root: string, file: string): MarkdownExample[] {
  const lines = readFileSync(path.join(root, file), "utf8").split("\n");
  const out: MarkdownExample[] = [];
  let open: { line: number; body: string[]; typescript: boolean } | undefined;
  lines.forEach((text, index) => {
    if (!text.startsWith("```")) {
      open?.body.push(text);
      return;
    }
    if (open === undefined) {
      const info = text.slice(3).trim().split(/\s+/)[0];
      open = { line: index + 2, body: [], typescript: info === "ts" || info === "typescript" };
      return;
    }
    if (open.typescript) {
      const code = open.body.join("\n") + "\n";
      out.push({ file, line: open.line, code, fragment: FRAGMENT_MARKER.test(open.body[0] ?? "") });
    }
    open = undefined;
  });
  return out;
}
