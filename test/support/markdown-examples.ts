// The code blocks of the user docs, as a reader copies them: every fenced block of README.md and
// docs/*.md with its language and where it starts, so a failure names the line to fix.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface MarkdownBlock {
  /** The markdown file, relative to the repository root. */
  readonly file: string;
  /** The 1-based line of the block's first code line. */
  readonly line: number;
  /** The fence's language (`ts`, `sh`, `json`, …; "" when none). */
  readonly language: string;
  readonly code: string;
}

export interface MarkdownExample extends MarkdownBlock {
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

/** Every fenced block of `file`, in order. */
export function markdownBlocks(root: string, file: string): MarkdownBlock[] {
  const lines = readFileSync(path.join(root, file), "utf8").split("\n");
  const out: MarkdownBlock[] = [];
  let open: { line: number; body: string[]; language: string } | undefined;
  lines.forEach((text, index) => {
    if (!text.startsWith("```")) {
      open?.body.push(text);
      return;
    }
    if (open === undefined) {
      open = { line: index + 2, body: [], language: text.slice(3).trim().split(/\s+/)[0] };
      return;
    }
    out.push({ file, line: open.line, language: open.language, code: open.body.join("\n") + "\n" });
    open = undefined;
  });
  return out;
}

export function typescriptExamples(root: string, file: string): MarkdownExample[] {
  return markdownBlocks(root, file)
    .filter((b) => b.language === "ts" || b.language === "typescript")
    .map((b) => ({ ...b, fragment: FRAGMENT_MARKER.test(b.code.split("\n")[0]) }));
}
