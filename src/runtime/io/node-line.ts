/**
 * The Node lines the script is tested on, and what it says when it runs on an older one: it may
 * well work there, but nothing checks it, and a user should learn that from Terraform's log
 * rather than from a failure.
 */

/** The oldest Node line the script's tests run on (.ci/run runs them on 22, 24 and 26). */
export const OLDEST_TESTED_NODE_LINE = 22;

/** One line for Terraform's log when `nodeVersion` (as in `process.versions.node`) is older than the tested lines. */
export function untestedNodeLineWarning(nodeVersion: string): string | undefined {
  const major = Number.parseInt(nodeVersion, 10);
  if (!Number.isInteger(major) || major >= OLDEST_TESTED_NODE_LINE) return undefined;
  return (
    `node ${nodeVersion} runs this script, but it is tested on Node ${OLDEST_TESTED_NODE_LINE}, 24 and 26 only: ` +
    `put node ${OLDEST_TESTED_NODE_LINE} or later first on the PATH of the process that runs terraform`
  );
}
