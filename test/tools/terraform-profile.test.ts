/**
 * The profile reader behind docs/performance.md's figures: it must name Terraform's functions
 * right, or the figures point at the wrong code.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

import { goSymbols, readProfile } from "../../tools/bench/terraform-profile";
import { describeWithTerraform } from "../support/terraform";

describeWithTerraform("terraform-profile", () => {
  // Read in beforeAll: jest runs a skipped suite's body too, and terraform may be missing then.
  let binary: string;
  let symbols: ReturnType<typeof goSymbols>;
  beforeAll(() => {
    binary = execFileSync("sh", ["-c", "command -v terraform"], { encoding: "utf8" }).trim();
    symbols = goSymbols(readFileSync(binary));
  });

  test("reads the function table of the terraform binary: sorted entries, Go names", () => {
    expect(symbols.entries.length).toBeGreaterThan(10_000);
    expect(symbols.entries.every((e, i) => i === 0 || symbols.entries[i - 1] <= e)).toBe(true);
    expect(symbols.names).toContain("main.main");
    expect(symbols.names).toContain("runtime.mallocgc");
  });

  test("names each frame of a perf sample by the function that holds its address", () => {
    const at = (name: string, delta: bigint) => symbols.entries[symbols.names.indexOf(name)] + delta;
    // perf prints file offsets for the executable; find the offsets of two known addresses.
    const offsetOf = (address: bigint) => {
      for (let guess = address & ~0xfffn; guess >= 0n; guess -= 0x1000n) {
        if (symbols.toAddress(address - guess) === address) return address - guess;
      }
      throw new Error("no segment holds the address");
    };
    const frame = (name: string) => `\t    ${offsetOf(at(name, 5n)).toString(16)} [unknown] (${binary})`;
    const text = [
      "terraform 1 1.0: 250000 cpu-clock:",
      frame("runtime.mallocgc"),
      frame("main.main"),
      "",
      "terraform 1 1.1: 250000 cpu-clock:",
      frame("main.main"),
      "",
    ].join("\n");
    const profile = readProfile(text, symbols, binary.split("/").pop());
    expect(profile.samples).toBe(2);
    expect(profile.self.get("runtime.mallocgc")).toBe(1);
    expect(profile.inclusive.get("main.main")).toBe(2);
  });
});
