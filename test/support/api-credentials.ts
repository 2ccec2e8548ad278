// The environment a pipeline's deploy step gives terraform: the API address and an account,
// as the scripts read them (never on a command line, never in cdk.tf.json).
import type { RunningEmulator } from "../../src/emulator";

export interface TestAccount {
  readonly username: string;
  readonly password: string;
}

/** process.env plus GPUCLOUD_BASE_URL/USERNAME/PASSWORD/TIMEOUT_SECONDS for `emulator`. */
export function credentialsEnv(emulator: RunningEmulator, account: TestAccount, timeoutSeconds = 30): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GPUCLOUD_BASE_URL: emulator.url,
    GPUCLOUD_USERNAME: account.username,
    GPUCLOUD_PASSWORD: account.password,
    GPUCLOUD_TIMEOUT_SECONDS: String(timeoutSeconds),
  };
}
