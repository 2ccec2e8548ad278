// The Terraform-backed suites again, on CDK Terrain: `npm run test:cdktn`.
//
// Maps `cdktf` to `cdktn` and the library (by package name, or as ../../src from a test) to its
// derived cdktn flavour, lib-cdktn/ (built by `npm run build`). The example and the tests run
// unchanged; their type-check still uses cdktf's types, of which cdktn's API is a superset.
const base = require("./jest.config");

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  moduleNameMapper: {
    "^cdktf$": "<rootDir>/node_modules/cdktn",
    "^cdktf-gpucloud(/cdktn)?$": "<rootDir>/lib-cdktn/index.js",
    "^(\\.\\./)+src(/index)?$": "<rootDir>/lib-cdktn/index.js",
  },
  setupFiles: ["<rootDir>/test/support/cdktn-flavour-check.js"],
  // cdktf-cli runs the bundled example (build/examples/main.js), which the mapping cannot reach.
  testPathIgnorePatterns: ["/node_modules/", "/test/terraform/cdktf-cli(\\.[a-z-]+)?\\.test\\.ts$"],
};
