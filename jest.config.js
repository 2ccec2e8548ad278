/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.dev.json" }],
  },
  // Terraform-driven suites start processes and run terraform; give them room.
  testTimeout: 120000,
  maxWorkers: 2,
  reporters: ["default", "<rootDir>/test/support/summary-reporter.js"],
};
