// See tmp-setup.js. GPUCLOUD_KEEP_TEST_TMP=1 keeps the folder (its path is printed) to look into.
const { rmSync } = require("node:fs");

module.exports = async function globalTeardown() {
  const dir = process.env.GPUCLOUD_TEST_RUN_TMPDIR;
  if (!dir) return;
  if (process.env.GPUCLOUD_KEEP_TEST_TMP === "1") {
    console.log(`kept the test run's temporary folder: ${dir}`);
    return;
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
};
