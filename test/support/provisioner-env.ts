import { newRunNonce } from "../../src/runtime/run/run-folder";

/**
 * A token provisioner's environment as the ApiToken construct gives it, from a test's GPUCLOUD_TOKEN_RUN:
 * the destroy half reads the run's id from there, the create half from GPUCLOUD_TOKEN_PLANNED (a
 * nonce of its own that carries the run's id, and no planned id), unless the test sets that itself.
 */
export function provisionerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.GPUCLOUD_TOKEN_PLANNED !== undefined) return env;
  return { ...env, GPUCLOUD_TOKEN_PLANNED: `${newRunNonce(env.GPUCLOUD_TOKEN_RUN || undefined)} ` };
}
