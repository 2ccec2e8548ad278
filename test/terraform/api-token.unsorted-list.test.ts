/**
 * A server that ignores sortField/sortOrder and lists in its own order, oldest first, on an
 * account whose oldest tokens share one created_at (a migration, a clock of whole seconds): a
 * page of them looks sorted newest first. The provisioners of an apply once took such a page for
 * the newest tokens, stopped there, and missed the managed names another party created after the
 * run's walk: they created those names a second time.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App, LocalBackend, TerraformStack } from "cdktf";

import { ApiToken } from "../../src";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { credentialsEnv } from "../support/api-credentials";
import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  type ProviderDoubles,
  startProviderDoubles,
  TerraformRunner,
} from "../support/terraform";

const USER = { username: "unsorted-bot", password: "unsorted-pw-81d4" };
const MANAGED = 16;

describeWithTerraform("a server that ignores the sort, listing oldest first", () => {
  let emulator: RunningEmulator;
  let doubles: ProviderDoubles;
  /** Called with each request line the emulator logs, after the response went out. */
  let onRequest: (line: string) => void = () => undefined;
  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    emulator = await startEmulator({ users: [USER], faults: { ignoreSortParams: true }, log: (line) => onRequest(line) });
    doubles = await startProviderDoubles();
  });
  afterAll(async () => {
    await doubles?.stop();
    await emulator?.close();
  });

  test("with old tokens sharing one created_at and managed names created by another party during the apply: no name is created twice", async () => {
    // First in the list: 120 migrated tokens of one second, long ago; then newer ones.
    emulator.addTokens({ name: "migrated", createdAt: 1_600_000_000, count: 120 });
    for (let i = 0; i < 5; i++) emulator.addToken({ name: `recent-${i}`, createdAt: 1_700_000_000 + i });

    const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-unsorted-"));
    const app = new App({ outdir });
    const stack = new TerraformStack(app, "s");
    new LocalBackend(stack, { path: "terraform.tfstate" });
    const names = Array.from({ length: MANAGED }, (_, i) => `unsorted-${i}`);
    names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name }));
    app.synth();
    const tf = new TerraformRunner(path.join(outdir, "stacks", "s"), { doubles, env: credentialsEnv(emulator, USER) });
    await tf.init({ check: true });

    // Right after the run's first create (its walk is taken by then), another party creates half
    // of the names not taken yet. One provisioner at a time: every later one lists after that.
    const theirs: string[] = [];
    onRequest = (line) => {
      if (theirs.length > 0 || !line.startsWith("POST /api-tokens 200")) return;
      const taken = new Set(emulator.tokens().map((t) => t.name));
      for (const name of names.filter((n) => !taken.has(n)).filter((_, i) => i % 2 === 0)) {
        emulator.addToken({ name, description: "made by another party" });
        theirs.push(name);
      }
    };
    const applied = await tf.apply({ check: true, args: ["-parallelism=1"] });
    onRequest = () => undefined;

    expect(theirs.length).toBeGreaterThanOrEqual(MANAGED / 2 - 1);
    const count = new Map<string, number>();
    for (const t of emulator.tokens()) count.set(t.name, (count.get(t.name) ?? 0) + 1);
    expect(names.filter((n) => count.get(n) !== 1)).toEqual([]);
    for (const name of theirs) expect(applied.stdout).toContain(`adopted existing API token "${name}"`);
  });
});
