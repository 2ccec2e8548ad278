// What a Terraform suite stands on: the emulator, the provider doubles, stack folders and runners
// that reach both, started before the suite's first test and stopped after its last.
import { rmSync } from "node:fs";

import type { TerraformStack } from "cdktf";

import { ApiClient } from "../../src/client/client";
import { openNodeHttpSender } from "../../src/client/node-http-sender";
import { type EmulatorOptions, type EmulatorTokenRecord, type EmulatorUser, type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialsEnv, type TestAccount } from "./api-credentials";
import { SynthFolder, type SynthFolderOptions } from "./synth-folder";
import { ensureProviderDoublesBuilt, type ProviderDoubles, startProviderDoubles, TerraformRunner } from "./terraform";

export interface TerraformFixtureOptions {
  /** The emulator's users; the first is the one `env()` logs in as. Without users, no emulator is started. */
  readonly users?: readonly EmulatorUser[];
  /** The emulator's other options (faults, page sizes, a request log). */
  readonly emulator?: Omit<EmulatorOptions, "users">;
  /** GPUCLOUD_TIMEOUT_SECONDS in `env()` (default 30). */
  readonly timeoutSeconds?: number;
}

export interface RunnerOptions {
  /** Terraform's whole environment (default `env()`: the first user's credentials). */
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  readonly asPid1?: boolean;
}

export interface TerraformFixture {
  /** The emulator (from beforeAll on). */
  readonly emulator: RunningEmulator;
  /** The provider doubles (from beforeAll on). */
  readonly doubles: ProviderDoubles;
  /** process.env with `user`'s credentials for `api` (default: the first user, the emulator), then `over`. */
  env(over?: NodeJS.ProcessEnv, user?: TestAccount, api?: RunningEmulator): NodeJS.ProcessEnv;
  /** A runner in `dir` through the doubles; `terraform init` has not run. */
  runner(dir: string, opts?: RunnerOptions): TerraformRunner;
  /** A runner in `dir` through the doubles, after `terraform init`. */
  init(dir: string, opts?: RunnerOptions): Promise<TerraformRunner>;
  /** A fresh folder to synthesize into, removed after the suite (unless KEEP_TF_TEST_DIRS=1). */
  folder(opts?: SynthFolderOptions): SynthFolder;
  /** A fresh folder with the stack `build` makes, synthesized, and its initialized runner. */
  stack(build: (stack: TerraformStack) => void, opts?: SynthFolderOptions & RunnerOptions): Promise<TerraformRunner>;
  /** Another emulator, closed after the suite. */
  startEmulator(opts: EmulatorOptions): Promise<RunningEmulator>;
  /** The tokens named `name` on `api` (default: the emulator). */
  named(name: string, api?: RunningEmulator): EmulatorTokenRecord[];
  /** The tokens named `name` on the account `account` ("" for users without one). */
  tokensOf(account: string, name: string): EmulatorTokenRecord[];
  /** An API client of the emulator logged in as `user` (default: the first user); the caller closes it. */
  client(user?: TestAccount): ApiClient;
}

/**
 * Call at the top of a `describeWithTerraform` body: registers the beforeAll that builds and starts
 * the doubles and the emulator, and the afterAll that stops them and removes the suite's folders.
 */
export function terraformFixture(opts: TerraformFixtureOptions = {}): TerraformFixture {
  let emulator: RunningEmulator | undefined;
  let doubles: ProviderDoubles | undefined;
  const others: RunningEmulator[] = [];
  const folders: SynthFolder[] = [];
  const firstUser = (): TestAccount => {
    if (!opts.users?.[0]) throw new Error("terraformFixture: no users given, so no credentials to use");
    return opts.users[0];
  };

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    if (opts.users) emulator = await startEmulator({ ...opts.emulator, users: opts.users });
    doubles = await startProviderDoubles();
  });
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
    await Promise.all(others.map((e) => e.close()));
    if (process.env.KEEP_TF_TEST_DIRS !== "1") for (const f of folders) rmSync(f.outdir, { recursive: true, force: true });
  });

  const fixture: TerraformFixture = {
    get emulator(): RunningEmulator {
      if (!emulator) throw new Error("terraformFixture: the emulator is there from beforeAll on, and only with users");
      return emulator;
    },
    get doubles(): ProviderDoubles {
      if (!doubles) throw new Error("terraformFixture: the provider doubles are there from beforeAll on");
      return doubles;
    },
    env: (over = {}, user = firstUser(), api = fixture.emulator) => ({ ...credentialsEnv(api, user, opts.timeoutSeconds), ...over }),
    runner: (dir, runnerOpts = {}) =>
      new TerraformRunner(dir, {
        doubles: fixture.doubles,
        env: runnerOpts.env ?? fixture.env(),
        timeoutMs: runnerOpts.timeoutMs,
        asPid1: runnerOpts.asPid1,
      }),
    init: async (dir, runnerOpts) => {
      const tf = fixture.runner(dir, runnerOpts);
      await tf.init({ check: true });
      return tf;
    },
    folder: (folderOpts) => {
      const folder = new SynthFolder(folderOpts);
      folders.push(folder);
      return folder;
    },
    stack: (build, stackOpts = {}) => fixture.init(fixture.folder(stackOpts).synth(build).dir, stackOpts),
    startEmulator: async (emulatorOpts) => {
      const api = await startEmulator(emulatorOpts);
      others.push(api);
      return api;
    },
    named: (name, api = fixture.emulator) => api.tokens().filter((t) => t.name === name),
    tokensOf: (account, name) => fixture.emulator.tokens().filter((t) => (t.account ?? "") === account && t.name === name),
    client: (user = firstUser()) =>
      new ApiClient(
        { baseUrl: fixture.emulator.url, credentials: { username: user.username, password: user.password }, totalTimeoutMs: 10_000 },
        openNodeHttpSender,
      ),
  };
  return fixture;
}
