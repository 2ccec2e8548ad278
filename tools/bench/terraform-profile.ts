/**
 * Where Terraform itself spends its CPU time: reads `perf script` output of a `perf record -g` of
 * terraform and prints the functions with the most samples, by Go function name. Prints figures,
 * asserts nothing.
 *
 *   perf record -e cpu-clock -F 4000 -g -o lib.data terraform plan      # in a kept bench folder
 *   perf script -i lib.data > lib.txt
 *   node build/tools/bench/terraform-profile.js lib.txt                  # top functions
 *   node build/tools/bench/terraform-profile.js lib.txt floor.txt        # and the difference to a second profile
 *   options: --top=40  --match=<regex on function names>  --binary=<terraform binary (default: the one on PATH)>
 *
 * Terraform's release binaries are stripped, so perf prints addresses only. Go keeps its own
 * symbol table for stack traces (the `.gopclntab` section, format of Go 1.18 and later:
 * https://go.dev/src/runtime/symtab.go); this reads the function entry addresses and names from
 * it. An unknown table format fails loudly rather than printing wrong names.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

import { arg } from "./args";

interface Symbols {
  /** Function entry addresses, ascending. */
  readonly entries: bigint[];
  readonly names: string[];
  /** perf prints an offset into the file; this turns one into a virtual address. */
  readonly toAddress: (fileOffset: bigint) => bigint;
}

/** The function table of a Go ELF executable (amd64 or arm64, little-endian). */
export function goSymbols(binary: Buffer): Symbols {
  if (binary.readUInt32BE(0) !== 0x7f454c46 || binary[4] !== 2 || binary[5] !== 1) {
    throw new Error("not a 64-bit little-endian ELF file");
  }
  const shoff = binary.readBigUInt64LE(0x28);
  const shentsize = binary.readUInt16LE(0x3a);
  const shnum = binary.readUInt16LE(0x3c);
  const shstrndx = binary.readUInt16LE(0x3e);
  const section = (i: number) => {
    const at = Number(shoff) + i * shentsize;
    return { name: binary.readUInt32LE(at), offset: Number(binary.readBigUInt64LE(at + 0x18)) };
  };
  const strtab = section(shstrndx).offset;
  const nameOf = (at: number) => binary.toString("latin1", at, binary.indexOf(0, at));
  let pclntab: number | undefined;
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (nameOf(strtab + s.name) === ".gopclntab") pclntab = s.offset;
  }
  if (pclntab === undefined) throw new Error("no .gopclntab section: not a Go binary");
  const magic = binary.readUInt32LE(pclntab);
  if (magic !== 0xfffffff0 && magic !== 0xfffffff1) {
    throw new Error(`unsupported .gopclntab format (magic 0x${magic.toString(16)}; Go 1.18 or later expected)`);
  }
  const header = (i: number) => binary.readBigUInt64LE(pclntab + 8 + 8 * i);
  const nfunc = Number(header(0));
  const textStart = header(2);
  const funcnameOffset = pclntab + Number(header(3));
  const functab = pclntab + Number(header(7));
  const entries: bigint[] = [];
  const names: string[] = [];
  for (let i = 0; i < nfunc; i++) {
    const entryOff = binary.readUInt32LE(functab + 8 * i);
    const funcOff = binary.readUInt32LE(functab + 8 * i + 4);
    const nameOff = binary.readInt32LE(functab + funcOff + 4);
    entries.push(textStart + BigInt(entryOff));
    names.push(nameOf(funcnameOffset + nameOff));
  }

  // Program headers: the loadable segment that holds a file offset gives its address.
  const phoff = Number(binary.readBigUInt64LE(0x20));
  const phentsize = binary.readUInt16LE(0x36);
  const phnum = binary.readUInt16LE(0x38);
  const loads: { offset: bigint; vaddr: bigint; size: bigint }[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (binary.readUInt32LE(at) !== 1) continue; // PT_LOAD
    loads.push({ offset: binary.readBigUInt64LE(at + 8), vaddr: binary.readBigUInt64LE(at + 16), size: binary.readBigUInt64LE(at + 32) });
  }
  const toAddress = (fileOffset: bigint): bigint => {
    const load = loads.find((l) => fileOffset >= l.offset && fileOffset < l.offset + l.size);
    return load ? fileOffset - load.offset + load.vaddr : fileOffset;
  };
  return { entries, names, toAddress };
}

function nameAt(symbols: Symbols, address: bigint): string {
  let lo = 0;
  let hi = symbols.entries.length - 1;
  if (hi < 0 || address < symbols.entries[0]) return "?";
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (symbols.entries[mid] <= address) lo = mid;
    else hi = mid - 1;
  }
  return symbols.names[lo];
}

interface Profile {
  readonly samples: number;
  /** Samples whose innermost frame is the function. */
  readonly self: Map<string, number>;
  /** Samples with the function anywhere on the stack. */
  readonly inclusive: Map<string, number>;
}

/** Reads `perf script` text: one sample per blank-line-separated block, one frame per line. */
export function readProfile(text: string, symbols: Symbols, binaryName = "terraform"): Profile {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let samples = 0;
  let stack: string[] = [];
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  const flush = () => {
    if (stack.length === 0) return;
    samples++;
    add(self, stack[0]);
    for (const name of new Set(stack)) add(inclusive, name);
    stack = [];
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      flush();
      continue;
    }
    const frame = /^\s+([0-9a-f]+) (.*) \((.*)\)$/.exec(line);
    if (!frame) continue;
    const [, hex, symbol, dso] = frame;
    if (dso.endsWith(`/${binaryName}`) || dso === binaryName) stack.push(nameAt(symbols, symbols.toAddress(BigInt(`0x${hex}`))));
    else stack.push(`[${dso.includes("kernel") ? "kernel" : dso}] ${symbol.replace(/\+0x[0-9a-f]+$/, "")}`);
  }
  flush();
  return { samples, self, inclusive };
}

function main(): void {
  const files = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  if (files.length === 0 || files.length > 2) {
    throw new Error("usage: terraform-profile <perf script output> [<second one, to compare>] [--top=N] [--match=regex] [--binary=path]");
  }
  const top = Number(arg("top") ?? 40);
  const match = new RegExp(arg("match") ?? "terraform/internal|hcl/v2|go-cty|runtime\\.gc|runtime\\.mallocgc");
  const binaryPath = arg("binary") ?? execFileSync("sh", ["-c", "command -v terraform"], { encoding: "utf8" }).trim();
  const symbols = goSymbols(readFileSync(binaryPath));
  const binaryName = binaryPath.split("/").pop() ?? "terraform";
  const profiles = files.map((f) => readProfile(readFileSync(f, "utf8"), symbols, binaryName));
  const short = (name: string) => name.replace(/^github\.com\/hashicorp\//, "");
  const [a, b] = profiles;
  console.log(`${files[0]}: ${a.samples} samples${b ? `; ${files[1]}: ${b.samples} samples` : ""}\n`);
  console.log("## Self (innermost frame)\n");
  for (const [name, n] of [...a.self].sort((x, y) => y[1] - x[1]).slice(0, Math.min(top, 25))) {
    console.log(`${((100 * n) / a.samples).toFixed(1).padStart(5)}%  ${short(name)}`);
  }
  console.log(
    `\n## Inclusive (on the stack), functions matching ${match}${b ? ", with the difference in samples to the second profile" : ""}\n`,
  );
  const rows = [...a.inclusive]
    .filter(([name]) => match.test(name))
    .map(([name, n]) => ({ name, n, other: b?.inclusive.get(name) ?? 0 }))
    .sort((x, y) => (b ? y.n - y.other - (x.n - x.other) : y.n - x.n))
    .slice(0, top);
  for (const row of rows) {
    const pct = `${((100 * row.n) / a.samples).toFixed(1).padStart(5)}%`;
    console.log(
      b
        ? `${pct}  ${String(row.n).padStart(6)} ${String(row.other).padStart(6)} ${String(row.n - row.other).padStart(6)}  ${short(row.name)}`
        : `${pct}  ${short(row.name)}`,
    );
  }
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  }
}
