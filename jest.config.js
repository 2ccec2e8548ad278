/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.dev.json" }],
  },
  // The example imports the library by its package name, as users do; in tests that name means
  // the sources, so no stale lib/ is ever exercised. (The runtime script itself is always the
  // bundle in lib/assets, built by `npm test`'s pretest step.)
  // The CDK Terrain flavour exists only as build output (derived from lib/ by scripts/build-cdktn.mjs).
  moduleNameMapper: { "^cdktf-gpucloud$": "<rootDir>/src/index.ts", "^cdktf-gpucloud/cdktn$": "<rootDir>/lib-cdktn/index.js" },
  // Terraform-driven suites start processes and run terraform; give them room.
  testTimeout: 120000,
  maxWorkers: 2,
  reporters: ["default", "<rootDir>/test/support/summary-reporter.js"],
  // One temporary folder per run, removed at the end (see test/support/tmp-setup.js).
  globalSetup: "<rootDir>/test/support/tmp-setup.js",
  globalTeardown: "<rootDir>/test/support/tmp-teardown.js",
};
