/**
 * The scripts of a synthesized example stack, run exactly as cdk.tf.json says and as Terraform
 * would run them, against the emulator over loopback HTTP.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App } from "cdktf";

import { GpuCiStack } from "../../examples/main";
import { defaultFlavors, md5Hex, type RunningEmulator, startEmulator } from "../../src/emulator";
import { terraformWithoutState } from "../support/fake-terraform";
import { SCRIPT_PATH } from "../support/processes";
import { type Ran, runExternal, runLocalExec } from "../support/synthesized-commands";

const PASSWORD = "scripts-test-password-81f2";

/** An on-demand H100 of any variant (`H100-80G-PCIe`, `H100-94G-NVL`, ...), as `gpu: "H100"` matches. */
const onDemandH100 = (gpu: string) => /^h100(-|$)/i.test(gpu) && !/-spot$/i.test(gpu);

/** A region of the seed data that offers an in-stock, on-demand, single H100. */
function h100Region(): string {
  for (const group of defaultFlavors()) {
    if (group.products.some((p) => onDemandH100(p.gpu) && p.gpu_count === 1 && p.stock_available === true)) {
      return group.products[0].region_id;
    }
  }
  throw new Error("the seed data has no in-stock H100 x1");
}

function synthesize(props: { tokenName: string; tokenDescription?: string }): { dir: string; config: any } {
  const outdir = mkdtempSync(path.join(tmpdir(), "gpucloud-scripts-"));
  const app = new App({ outdir });
  new GpuCiStack(app, "gpu-ci", { regionId: h100Region(), ...props });
  app.synth();
  const dir = path.join(outdir, "stacks", "gpu-ci");
  return { dir, config: JSON.parse(readFileSync(path.join(dir, "cdk.tf.json"), "utf8")) };
}

/** The name of the stack's plan-time read (the reads after the writes are `gpucloud-stack-read_after-write…`). */
const PLAN_TIME_READ = /^gpucloud-stack-read_[0-9A-F]+$/;

function external(config: any, fragment: string | RegExp): { program: string[]; query: Record<string, string> } {
  const matches = (name: string) => (typeof fragment === "string" ? name.includes(fragment) : fragment.test(name));
  const entry = Object.entries<any>(config.data.external).find(([name]) => matches(name));
  if (!entry) throw new Error(`no data.external matching ${fragment}`);
  return entry[1];
}

/** The key of the stack's one lookup of this kind in the stack's read (its `<key>.lookup` field). */
function lookupKey(read: { query: Record<string, string> }, kind: string): string {
  const flat = Object.keys(read.query).find((k) => k.endsWith(".lookup") && read.query[k] === kind);
  if (!flat) throw new Error(`the stack's read answers no ${kind}`);
  return flat.slice(0, -".lookup".length);
}

function sync(config: any): { triggers: Record<string, string>; create: any; destroy: any } {
  const resource = Object.values<any>(config.resource.null_resource)[0];
  const [create, destroy] = resource.provisioner.map((p: any) => p["local-exec"]);
  return { triggers: resource.triggers, create, destroy };
}

describe("synthesized scripts against the emulator", () => {
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  // What reaches Terraform's log: both streams of a provisioner, stderr of an external program
  // (its stdout is the result, which Terraform keeps in state, not in the log).
  const printed: string[] = [];
  const record = <T extends Ran & { result?: unknown }>(ran: T): T => {
    printed.push(ran.stderr);
    if (!("result" in ran)) printed.push(ran.stdout);
    return ran;
  };

  beforeAll(async () => {
    emulator = await startEmulator({ users: [{ username: "ci-bot", password: PASSWORD }] });
    env = {
      PATH: SCRIPT_PATH,
      GPUCLOUD_BASE_URL: emulator.url,
      GPUCLOUD_USERNAME: "ci-bot",
      GPUCLOUD_PASSWORD: PASSWORD,
      GPUCLOUD_TIMEOUT_SECONDS: "20",
      // These folders never saw `terraform init`: the plan-time read looks at a state without a ledger.
      ...terraformWithoutState(),
    };
  });
  afterAll(() => emulator?.close());

  test("flavors: the cheapest in-stock on-demand H100 x1 of the region", async () => {
    const { dir, config } = synthesize({ tokenName: "ci-flavors" });
    // The example's Flavors has a literal query: the stack's one read answers it.
    const read = external(config, PLAN_TIME_READ);
    const key = lookupKey(read, "flavors");
    expect(read.query[`${key}.path`]).toBe("gpu-ci/h100");
    const ran = record(await runExternal(dir, read, env));
    const result = Object.fromEntries(
      Object.entries(ran.result ?? {})
        .filter(([k]) => k.startsWith(`${key}.`))
        .map(([k, v]) => [k.slice(key.length + 1), v]),
    );
    expect(ran.stderr).not.toContain("error");
    expect(ran.code).toBe(0);
    const region = h100Region();
    const expected = defaultFlavors()
      .flatMap((g) => g.products)
      .filter((p) => p.region_id === region && onDemandH100(p.gpu) && p.gpu_count === 1 && p.stock_available === true)
      .sort((a, b) => a.price - b.price || a.name.localeCompare(b.name));
    expect(result.cheapest_id).toBe(expected[0].id);
    expect(Number(result.cheapest_price)).toBe(expected[0].price);
    expect(JSON.parse(result.ids)).toEqual(expected.map((p) => p.id));
    expect(Object.values(ran.result!).every((v) => typeof v === "string")).toBe(true);
  });

  test("token lifecycle: the stack's read, create, no-op rerun, rename through a hand-off of the same run, adopt", async () => {
    const first = synthesize({ tokenName: "ci-scripts", tokenDescription: "v1" });
    let s = sync(first.config);
    const key = s.triggers.key;
    // The stack's read names the stack's only token by its slot, t0, and gives its key in the query.
    expect(external(first.config, PLAN_TIME_READ).query["t0.key"]).toBe(key);
    const slot = "t0";
    const field = (result: Record<string, string> | undefined, name: string) => result?.[`${slot}.${name}`];

    let observed = record(await runExternal(first.dir, external(first.config, PLAN_TIME_READ), env));
    expect(field(observed.result, "in_sync")).toBe("false");
    expect(field(observed.result, "reason")).toBe('no API token is named "ci-scripts"');
    expect(field(observed.result, "id")).toBe("");

    emulator.resetStats();
    let applied = record(await runLocalExec(first.dir, s.create, env, { triggers: s.triggers }));
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/created API token "ci-scripts" \(id \S+\)/);
    expect(emulator.tokens().filter((t) => t.name === "ci-scripts")).toHaveLength(1);
    const created = emulator.tokens().find((t) => t.name === "ci-scripts")!;
    expect(created.description).toBe("v1");

    observed = record(await runExternal(first.dir, external(first.config, PLAN_TIME_READ), env));
    expect(observed.result).toMatchObject({
      [`${slot}.in_sync`]: "true",
      [`${slot}.id`]: created.id,
      [`${slot}.token`]: created.token,
      [`${slot}.description`]: "v1",
    });
    // Only the managed token's fields and the lookup's answer: nothing about other tokens of the account.
    const stackRead = external(first.config, PLAN_TIME_READ);
    const lookups = [lookupKey(stackRead, "flavors"), lookupKey(stackRead, "flavor-preference")];
    const ofLookup = (k: string) => lookups.some((l) => k.startsWith(`${l}.`));
    expect(Object.keys(observed.result!).filter((k) => !k.startsWith(`${slot}.`) && !ofLookup(k))).toEqual([
      "ticket",
      "ledger",
      "warnings",
    ]);
    expect(observed.result!.warnings).toBe("");
    // The read after the writes runs the same program with the tokens' part of the query.
    const read = record(await runExternal(first.dir, external(first.config, "after-write"), env));
    // The same observation and ledger; the run's ticket is the plan-time read's alone (a read after the writes takes it, makes none).
    expect(read.result).toEqual(Object.fromEntries(Object.entries(observed.result!).filter(([k]) => !ofLookup(k) && k !== "ticket")));

    // Running the create side again writes nothing.
    emulator.resetStats();
    applied = record(await runLocalExec(first.dir, s.create, env, { triggers: s.triggers }));
    expect(applied.stdout).toContain("is up to date; no change");
    expect(emulator.stats().tokenWrites).toBe(0);

    // A rename is a replacement in Terraform: destroy side first, then the new create side, both
    // children of one process (here this test's; under Terraform the terraform process).
    const renamed = synthesize({ tokenName: "ci-scripts-2", tokenDescription: "v1" });
    const released = record(await runLocalExec(first.dir, s.destroy, env, { triggers: s.triggers }));
    expect(released.code).toBe(0);
    // An info line: this half cannot tell a replacement from a destroy (the stack's roster warns about tokens left behind).
    expect(released.stdout).toMatch(/released API token "ci-scripts" \(id \S+\) to the resource that replaces this one, if any/);
    expect(released.stdout).not.toContain("WARNING");
    const handoffs = () =>
      existsSync(path.join(first.dir, ".gpucloud-handoff")) ? readdirSync(path.join(first.dir, ".gpucloud-handoff")) : [];
    expect(handoffs().filter((f) => f.startsWith(`${key}.`) && !f.endsWith(".applied.json"))).toHaveLength(1);

    // Same stack folder (Terraform's working directory), new configuration.
    s = sync(renamed.config);
    // A rename without previousNames: the plan-time read found no token of the new name, so no planned id.
    const renamedRun = record(await runLocalExec(first.dir, s.create, env, { triggers: s.triggers }, "default", ""));
    expect(renamedRun.code).toBe(0);
    expect(renamedRun.stdout).toContain(`API token id ${created.id}: renamed "ci-scripts" to "ci-scripts-2"`);
    const after = emulator.tokens().filter((t) => t.name.startsWith("ci-scripts"));
    expect(after).toEqual([expect.objectContaining({ id: created.id, name: "ci-scripts-2", token: created.token })]);
    // No hand-off left (the run's sealed session and its walk stay until the next plan).
    expect(handoffs().filter((f) => !f.endsWith(".applied.json") && !f.startsWith("session-") && !f.startsWith("walk-"))).toEqual([]);

    // A token that exists before the first apply is adopted, not duplicated.
    const existing = emulator.addToken({ name: "ci-preexisting", description: "made by hand" });
    const adopt = synthesize({ tokenName: "ci-preexisting", tokenDescription: "now managed" });
    const adoptSync = sync(adopt.config);
    // The plan-time read found it: its id is the planned one, which the create half ends on.
    const adopted = record(await runLocalExec(adopt.dir, adoptSync.create, env, { triggers: adoptSync.triggers }, "default", existing.id));
    expect(adopted.stdout).toContain(`adopted existing API token "ci-preexisting" (id ${existing.id})`);
    expect(emulator.tokens().filter((t) => t.name === "ci-preexisting")).toEqual([
      expect.objectContaining({ id: existing.id, description: "now managed" }),
    ]);
  });

  test("bad credentials fail with a message that names the variables, not their values", async () => {
    const { dir, config } = synthesize({ tokenName: "ci-badcreds" });
    const wrong = record(await runExternal(dir, external(config, PLAN_TIME_READ), { ...env, GPUCLOUD_PASSWORD: "wrong-password-xyz" }));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/gpucloud: error: stack-read: .*(401|invalid username or password)/i);
    expect(wrong.stderr).not.toContain("wrong-password-xyz");

    const missing = record(
      await runExternal(dir, external(config, PLAN_TIME_READ), { PATH: SCRIPT_PATH, GPUCLOUD_BASE_URL: emulator.url }),
    );
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("GPUCLOUD_API_TOKEN");
    expect(missing.stderr).toContain("GPUCLOUD_USERNAME");
  });

  test("nothing secret was printed by any script", () => {
    const all = printed.join("\n");
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(PASSWORD);
    expect(all.toLowerCase()).not.toContain(md5Hex(PASSWORD));
    for (const token of emulator.tokens()) expect(all).not.toContain(token.token);
  });
});
