/**
 * The scripts of a synthesized example stack, run exactly as cdk.tf.json says and as Terraform
 * would run them, against the emulator over loopback HTTP.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { App } from "cdktf";

import { GpuCiStack } from "../../examples/main";
import { defaultFlavors, md5Hex, type RunningEmulator, startEmulator } from "../../src/emulator";
import { terraformWithoutState } from "../support/fake-terraform";
import { SCRIPT_PATH } from "../support/processes";
import { type Ran, runExternal } from "../support/synthesized-commands";

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
