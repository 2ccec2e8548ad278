/**
 * A docs table of a construct's props lists every prop of its props interface, and no other: a
 * prop added or renamed in the source fails here until the table says what it means.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import ts from "typescript";

const root = path.resolve(__dirname, "../..");
const read = (rel: string): string => readFileSync(path.join(root, rel), "utf8");

/** Each props table: the doc, the heading of its section, and the interface it documents. */
const TABLES = [
  { doc: "docs/accounts.md", heading: "## `GpuCloudAccount`", source: "src/constructs/account.ts", props: "GpuCloudAccountProps" },
];

/** The members of `name`, an interface of `file` (its own: one that extends another is not read here). */
function interfaceProps(file: string, name: string): string[] {
  const sf = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
  const decl = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
  if (!decl) throw new Error(`${file}: no interface ${name}`);
  if (decl.heritageClauses) throw new Error(`${file}: ${name} extends another interface, whose props this test does not read`);
  return decl.members.map((m) => m.name!.getText(sf));
}

/** The section of `doc` under `heading`, up to the next heading of its level or above. */
function section(doc: string, heading: string): string {
  const text = read(doc);
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${doc}: no heading ${heading}`);
  const rest = text.slice(start + heading.length + 2);
  const level = /^#+/.exec(heading)![0];
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, "m"));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The first cell of each row of the section's `| Prop | …` table, unquoted. */
function tableProps(text: string): string[] {
  const lines = text.split("\n");
  const head = lines.findIndex((l) => l.startsWith("| Prop |"));
  if (head < 0) return [];
  const props: string[] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith("|")) break;
    const cell = line.split("|")[1].trim();
    props.push(cell.replace(/^`(.*)`$/, "$1"));
  }
  return props;
}

test.each(TABLES)(
  "$doc, $heading: the table lists every prop of $props, and the signature names them",
  ({ doc, heading, source, props }) => {
    const text = section(doc, heading);
    const wanted = interfaceProps(source, props);
    expect(wanted.length).toBeGreaterThan(0);
    expect(tableProps(text).sort()).toEqual([...wanted].sort());
    // The constructor line above the table: `new X(scope, id, { a?, b? })`.
    const signature = /\(scope, id, \{ ([^}]*) \}\)/.exec(text)?.[1] ?? "";
    const named = signature.split(/,\s*/).map((p) => p.replace(/\?$/, ""));
    expect(named.sort()).toEqual([...wanted].sort());
  },
);
