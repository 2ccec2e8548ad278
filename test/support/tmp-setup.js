// Every test run gets a temporary folder of its own, removed when the run ends: the suites make
// hundreds of folders (stacks, hand-offs, cdktf's own outdirs) and not all of them clean up.
// Workers are started after global setup and inherit TMPDIR, so os.tmpdir() is this folder in
// every test, and in every process a test starts (terraform, scripts, the cdktf CLI).
const { mkdtempSync } = require("node:fs");
const { tmpdir } = require("node:os");
const path = require("node:path");

module.exports = async function globalSetup() {
  const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-test-run-"));
  process.env.GPUCLOUD_TEST_RUN_TMPDIR = dir;
  process.env.TMPDIR = dir;
};
