import { encodeRunTicket, PLANNED_ENV, TokenEnv } from "../../src/protocol";
import { randomHex } from "../../src/runtime/io/crypto";

/**
 * A token provisioner's environment as the ApiToken construct gives it, from a test's
 * GPUCLOUD_TOKEN_PLAN_TIME: the destroy half reads the plan time from there, the create half from
 * GPUCLOUD_TOKEN_PLANNED (a ticket of its own that carries that plan time, and no planned id),
 * unless the test sets that itself.
 */
export function provisionerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env[PLANNED_ENV] !== undefined) return env;
  const ticket = encodeRunTicket({ id: randomHex(16), planTime: env[TokenEnv.PLAN_TIME] || undefined });
  return { ...env, [PLANNED_ENV]: `${ticket} ` };
}
