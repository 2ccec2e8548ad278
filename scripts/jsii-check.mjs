// Compiles the public construct API (the main entry) with jsii in a temporary copy, so that
// Python, Go, Java and C# bindings can be published later. Prints jsii's diagnostics and exits
// non-zero if it rejects anything.
//
//   node scripts/jsii-check.mjs            # installs jsii on first use (node_modules/.cache)
//   JSII_BIN=/path/to/jsii node scripts/jsii-check.mjs
//   node scripts/jsii-check.mjs --keep     # keep the temporary copy (path printed)
//
// What is compiled, and how: scripts/jsii-assembly.mjs.
import { compileAssembly, removeWork } from "./jsii-assembly.mjs";

const keep = process.argv.includes("--keep");
// Warnings (e.g. names that some languages must rename) are printed; JSII_FAIL_ON_WARNINGS=1
// makes them fatal.
const res = compileAssembly({ tag: "jsii-check", failOnWarnings: process.env.JSII_FAIL_ON_WARNINGS === "1" });
if (res.output.trim()) console.log(res.output.trimEnd());
if (res.ok) console.log(`jsii-check: OK in ${res.seconds} s; ${res.types.length} types: ${res.types.join(", ")}`);
else console.error(`jsii-check: jsii rejected the public API (exit ${res.status}) after ${res.seconds} s`);
if (keep) console.log(`jsii-check: kept ${res.work}`);
else removeWork(res.work);
process.exit(res.ok ? 0 : 1);
