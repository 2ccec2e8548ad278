/**
 * On a Node line older than the oldest one the script is tested on, the script says so once per
 * process, on stderr (which Terraform shows for provisioners and failed reads); on a tested line
 * it says nothing. The process test runs the built bundle on SCRIPT_NODE (.ci/run: 22, 24, 26;
 * by hand, the node running jest, possibly an older one).
 */
import path from "node:path";

import { OLDEST_TESTED_NODE_LINE, untestedNodeLineWarning } from "../../src/runtime/io/node-line";
import { runProcess, SCRIPT_NODE } from "../support/processes";

const LAUNCHER = path.resolve(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");

describe("untestedNodeLineWarning", () => {
  test.each(["18.20.4", "20.20.2", "21.7.3"])("warns on Node %s, naming it and the tested lines", (version) => {
    const warning = untestedNodeLineWarning(version);
    expect(warning).toContain(`node ${version} runs this script`);
    expect(warning).toContain(`Node ${OLDEST_TESTED_NODE_LINE}, 24 and 26`);
  });

  test.each(["22.0.0", "22.12.0", "24.3.0", "26.0.0", "27.1.0"])("says nothing on Node %s", (version) => {
    expect(untestedNodeLineWarning(version)).toBeUndefined();
  });
});

test("the script warns exactly once per process on an untested line, never on a tested one", async () => {
  const version = (await runProcess(SCRIPT_NODE, ["-p", "process.versions.node"], { env: {} })).stdout.trim();
  // A command that fails at once (no API address): the warning must come before the error, once.
  const ran = await runProcess(SCRIPT_NODE, [LAUNCHER, "flavors"], { env: {}, stdin: "{}" });
  expect(ran.code).toBe(1);
  const warnings = ran.stderr.split("\n").filter((line) => line.includes("runs this script"));
  if (Number.parseInt(version, 10) < OLDEST_TESTED_NODE_LINE) {
    expect(warnings).toEqual([`gpucloud: WARNING: ${untestedNodeLineWarning(version)}`]);
  } else {
    expect(warnings).toEqual([]);
  }
  expect(ran.stderr).toContain("gpucloud: error: flavors: no API address");
});
