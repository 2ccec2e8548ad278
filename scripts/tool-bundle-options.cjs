// esbuild options for repo-only tools (provider doubles, demo, example app): one bundle per
// entry, dependencies left in node_modules. Shared by scripts/build.mjs and by the test
// harness, which rebuilds the provider doubles when their sources are newer than the bundle.
exports.toolBundleOptions = (entry, outfile) => ({
  entryPoints: [entry],
  outfile,
  bundle: true,
  packages: "external",
  platform: "node",
  target: "node20",
  format: "cjs",
  logLevel: "warning",
});
