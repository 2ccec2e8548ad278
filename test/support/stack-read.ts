/**
 * Synth tests of Flavors and FlavorPreference: the lookup's part of the synthesized stack, whether
 * it joined the stack's one read (a literal query) or kept a `data "external"` of its own.
 */

export interface SynthesizedLookup {
  /** The data source that answers the lookup. */
  readonly program: string[];
  /** The command whose answer it gets: the `lookup` field in the stack's read, else the program's command. */
  readonly kind: string;
  /** The lookup's own query, its key prefix taken off (and without `lookup` and `path`). */
  readonly query: Record<string, string>;
  /** The construct path the stack's read names it by; undefined for a data source of its own. */
  readonly path?: string;
  /** Whether the stack's read answers it. */
  readonly shared: boolean;
}

/** The one lookup of a synthesized stack that has exactly one data source. */
export function onlyLookup(json: any): SynthesizedLookup {
  const all = Object.values<any>(json.data.external);
  expect(all).toHaveLength(1);
  const read = all[0];
  const command = read.program[2];
  if (command !== "stack-read") return { program: read.program, kind: command, query: read.query, shared: false };
  const query: Record<string, string> = {};
  let kind = "";
  let path: string | undefined;
  for (const [flatKey, value] of Object.entries<string>(read.query)) {
    const dot = flatKey.indexOf(".");
    if (dot < 0) continue;
    const field = flatKey.slice(dot + 1);
    if (field === "lookup") kind = value;
    else if (field === "path") path = value;
    else query[field] = value;
  }
  return { program: read.program, kind, query, path, shared: true };
}

/** The Terraform text of a lookup's result field read from the stack's read, as a pattern. */
export const SHARED_FIELD = (field: string): string => `local\\.gpucloud-stack-read_lookup-results_[0-9A-F]+\\["\\w+\\.${field}"\\]`;
