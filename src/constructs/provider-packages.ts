// The cdktf flavour builds on the prebuilt @cdktf/provider-null and @cdktf/provider-external classes,
// optional peer dependencies so that a CDK Terrain app installs no cdktf (they depend on it): a cdktf
// app without them is told the command that installs them, not only Node's "Cannot find module".
// scripts/build-cdktn.mjs rewrites these requires to the cdktn flavour's own bindings, which always load.

/** The README's cdktf install line, less the library itself. */
const INSTALL = "npm install cdktf@^0.21 constructs@^10 @cdktf/provider-null @cdktf/provider-external";

/** The prebuilt provider packages the cdktf flavour loads. */
const PACKAGES = ["@cdktf/provider-null", "@cdktf/provider-external"];

try {
  // Literal specifiers: the cdktn build rewrites only those. Loaded by the constructs anyway.
  /* eslint-disable @typescript-eslint/no-require-imports */
  require("@cdktf/provider-null/lib/provider");
  require("@cdktf/provider-external/lib/provider");
  /* eslint-enable @typescript-eslint/no-require-imports */
} catch (e) {
  // Only the packages themselves, asked by name: a module missing inside them (cdktf, say) keeps Node's own error.
  const missing = (e as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND" ? PACKAGES.find((name) => !resolvable(name)) : undefined;
  if (missing === undefined) throw e;
  throw new Error(
    `cdktf-gpucloud: ${missing} is not installed. A cdktf app needs the prebuilt provider packages beside cdktf: ` +
      `${INSTALL}. A CDK Terrain app imports "cdktf-gpucloud/cdktn", which needs neither.`,
    { cause: e },
  );
}

/** Whether a package is installed where this module can load it (its package.json: found, or found but not exported). */
function resolvable(name: string): boolean {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND";
  }
}
