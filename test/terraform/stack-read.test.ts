/**
 * The stack's one plan-time read under real Terraform (offline, through the provider doubles):
 * a steady plan of tokens and lookups runs one script process that logs in once, and merging
 * never makes something unknown at plan that its own read would know: a token's computed name
 * leaves the lookups' attributes known, a lookup's computed query leaves the tokens' in-sync
 * trigger known. With a password, each script process logs in once: an apply of new tokens logs in
 * three times (plan-time read, writer, read after the writes). `dependsOn: [token]` orders a resource
 * after the token's writer and read after the writes. Script processes are counted by a `node` on
 * Terraform's PATH that logs each start.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { Fn, TerraformOutput, type TerraformStack } from "cdktf";

import { ApiToken, FlavorPreference, Flavors } from "../../src";
import { SCRIPT_NODE } from "../support/processes";
import { type ChangeJson, describeWithTerraform, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "stack-read-bot", password: "stack-read-pw-51c9" };
/** The cheapest H100 x1 in norway-east-1 of the emulator's seed catalog (see src/emulator/seed.ts). */
const NORWAY_H100X1 = "no1-h100x1-spot";

describeWithTerraform("the stack's one read, under real Terraform", () => {
  const fx = terraformFixture({ users: [USER], timeoutSeconds: 20 });
  let bin: string;
  let log: string;

  beforeAll(() => {
    bin = mkdtempSync(path.join(tmpdir(), "gpucloud-stack-read-bin-"));
    log = path.join(bin, "processes.log");
    writeFileSync(path.join(bin, "node"), `#!/bin/sh\nprintf '%s\\n' "$*" >> "${log}"\nexec "${SCRIPT_NODE}" "$@"\n`);
    chmodSync(path.join(bin, "node"), 0o755);
  });
  afterAll(() => {
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  /** The script commands started since the last call, sorted. */
  const processes = (): string[] => {
    const lines = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
    rmSync(log, { force: true });
    return lines.map((line) => line.split(" ").at(-1)!).sort();
  };
  const stackWith = (build: (stack: TerraformStack) => void): Promise<TerraformRunner> =>
    fx.stack(build, { env: fx.env({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` }), prefix: "gpucloud-stack-read-" });
  const lookups = (stack: TerraformStack) => {
    const h100 = new Flavors(stack, "h100", { regionId: "norway-east-1", gpu: "H100", gpuCount: 1 });
    const a100 = new Flavors(stack, "a100", { gpu: "A100-80G", allowEmpty: true });
    const pick = new FlavorPreference(stack, "pick", {
      choices: [{ regionId: "norway-east-1", gpu: "H100", inStockOnly: true, spot: false }, { gpus: ["A100-80G"] }],
    });
    new TerraformOutput(stack, "h100_id", { value: h100.cheapestId });
    new TerraformOutput(stack, "a100_count", { value: a100.count });
    new TerraformOutput(stack, "pick_id", { value: pick.flavorId });
  };
  const known = (change: ChangeJson | undefined): boolean => change !== undefined && change.after_unknown !== true;

  test("a steady plan of tokens and lookups runs one script process, with one login, one list walk and one catalog call", async () => {
    const tf = await stackWith((stack) => {
      lookups(stack);
      for (let i = 0; i < 3; i++)
        new TerraformOutput(stack, `t${i}_id`, { value: new ApiToken(stack, `t${i}`, { name: `read-steady-${i}` }).tokenId });
    });
    await tf.apply({ check: true });
    const outputs = await tf.output();
    expect([outputs.h100_id.value, outputs.pick_id.value]).toEqual([NORWAY_H100X1, "no1-h100x1"]);
    processes();
    fx.emulator.resetStats();
    const plan = await tf.plan({ detailedExitCode: true });
    expect(plan.exitCode).toBe(0);
    expect(processes()).toEqual(["stack-read"]);
    const stats = fx.emulator.stats();
    expect(stats.logins).toBe(1);
    expect(stats.byRoute["GET /api-tokens"]).toBe(1);
    expect(stats.byRoute["GET /flavors"]).toBe(1);
    expect(stats.tokenWrites).toBe(0);
  });

  test("a token's name known only at apply leaves the lookups' attributes known at plan (they get a read of their own)", async () => {
    const tf = await stackWith((stack) => {
      lookups(stack);
      const seed = new Resource(stack, "seed", {});
      new ApiToken(stack, "computed", { name: `read-computed-${seed.id}` });
    });
    const plan = await tf.plan({});
    expect(plan.exitCode).toBe(0);
    const outputs = plan.plan!.output_changes!;
    expect(known(outputs.h100_id)).toBe(true);
    expect(outputs.h100_id.after).toBe(NORWAY_H100X1);
    expect(known(outputs.pick_id)).toBe(true);
    expect(outputs.pick_id.after).toBe("no1-h100x1");
    expect(known(outputs.a100_count)).toBe(true);
    // The tokens' read is deferred to apply; the lookups' read ran, once for the three.
    expect(processes()).toEqual(["stack-read"]);
    await tf.apply({ check: true, planFile: plan.planFile });
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("a lookup's query known only at apply leaves the tokens' in-sync trigger known at plan (no replacement)", async () => {
    fx.emulator.addToken({ name: "read-in-sync" });
    const tf = await stackWith((stack) => {
      const seed = new Resource(stack, "seed", {});
      // "H100" once the seed exists: unknown at the first plan.
      const computed = new Flavors(stack, "computed", { regionId: "norway-east-1", gpu: `H100${Fn.substr(seed.id, 0, 0)}`, gpuCount: 1 });
      new TerraformOutput(stack, "computed_id", { value: computed.cheapestId });
      new ApiToken(stack, "token", { name: "read-in-sync" });
    });
    const plan = await tf.plan({});
    expect(plan.exitCode).toBe(0);
    const writer = plan.plan!.resource_changes!.find((rc) => rc.address === "null_resource.gpucloud_token_writer")!;
    expect(writer.change.actions).toEqual(["create"]);
    expect((writer.change.after as { triggers: Record<string, string> }).triggers["s/token.in_sync"]).toBe("true");
    expect(writer.change.after_unknown).not.toHaveProperty(["triggers", "s/token.in_sync"]);
    expect(known(plan.plan!.output_changes!.computed_id)).toBe(false);
    await tf.apply({ check: true, planFile: plan.planFile });
    expect((await tf.output()).computed_id.value).toBe(NORWAY_H100X1);
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });

  test("with a password, an apply logs in once per script process: 3 for new tokens (plan-time read, writer, read after the writes), 2 for an update, 1 when steady", async () => {
    const build = (description: string) => (stack: TerraformStack) => {
      for (let i = 0; i < 3; i++) {
        const token = new ApiToken(stack, `t${i}`, { name: `read-logins-${i}`, description });
        new TerraformOutput(stack, `t${i}_id`, { value: token.tokenId });
      }
    };
    const folder = fx.folder({ prefix: "gpucloud-stack-read-logins-" });
    folder.synth(build("v1"));
    const tf = await fx.init(folder.dir, { env: fx.env({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` }) });
    processes();
    fx.emulator.resetStats();
    await tf.apply({ check: true });
    expect(processes()).toEqual(["stack-read", "stack-read", "token-writer"]);
    expect(fx.emulator.stats().logins).toBe(3);
    expect(fx.emulator.stats().byRoute["POST /api-tokens"]).toBe(3);
    const ids = (await tf.output()) as Record<string, { value: string }>;
    for (let i = 0; i < 3; i++) expect(fx.named(`read-logins-${i}`).map((t) => t.id)).toEqual([ids[`t${i}_id`].value]);

    // A description change of every token: the plan found every id, so no read after the writes runs.
    folder.synth(build("v2"));
    fx.emulator.resetStats();
    await tf.apply({ check: true });
    expect(processes()).toEqual(["stack-read", "token-writer"]);
    expect(fx.emulator.stats().logins).toBe(2);
    for (let i = 0; i < 3; i++) expect(fx.named(`read-logins-${i}`).map((t) => t.description)).toEqual(["v2"]);

    fx.emulator.resetStats();
    await tf.apply({ check: true });
    expect(processes()).toEqual(["stack-read"]);
    expect(fx.emulator.stats().logins).toBe(1);
    expect(fx.emulator.stats().tokenWrites).toBe(0);
  });

  /** What a consumer's provisioner saw: the emulator's state (tokens and stats) when it ran. */
  interface Seen {
    data: { tokens: { name: string; id: string }[]; stats: { logins: number; tokenWrites: number } };
  }

  test("dependsOn: [token]: a resource that depends on a token runs after its account's writer and, for a create, after the read after the writes", async () => {
    const folder = fx.folder({ prefix: "gpucloud-stack-read-depends-" });
    const seenFile = path.join(folder.outdir, "seen.json");
    // Fetches the emulator's control surface (no credentials) with the real node, not the counting shim.
    const fetchState =
      'require("http").get(process.env.STATE_URL, (r) => { let b = ""; r.on("data", (c) => (b += c)); ' +
      'r.on("end", () => require("fs").writeFileSync(process.env.OUT, b)); })';
    const build = (name: string, previousNames?: string[]) => (stack: TerraformStack) => {
      const token = new ApiToken(stack, "token", { name, previousNames });
      // Refers to no attribute of the token: only dependsOn orders it.
      new Resource(stack, "consumer", {
        triggers: { name },
        dependsOn: [token],
        provisioners: [
          {
            type: "local-exec",
            command: `'${SCRIPT_NODE}' -e '${fetchState}'`,
            environment: { STATE_URL: `${fx.emulator.url}/_emulator/state`, OUT: seenFile },
          },
        ],
      });
    };
    const seen = () => JSON.parse(readFileSync(seenFile, "utf8")) as Seen;
    folder.synth(build("read-depends-one"));
    const tf = await fx.init(folder.dir);

    const plan = await tf.plan({ check: true });
    // The configuration Terraform plans: the consumer depends on the read after the writes, which depends on the writer.
    const config = (plan.plan!.configuration as { root_module: { resources: { address: string; depends_on?: string[] }[] } }).root_module
      .resources;
    const afterWrite = config.find((r) => r.address.startsWith("data.external.gpucloud-stack-read_after-write"))!;
    expect(config.find((r) => r.address === "null_resource.consumer")!.depends_on).toEqual([afterWrite.address]);
    expect(afterWrite.depends_on).toEqual(["null_resource.gpucloud_token_writer"]);

    fx.emulator.resetStats();
    const applied = await tf.apply({ check: true, planFile: plan.planFile });
    const order = (line: string) => {
      const at = applied.stdout.indexOf(line);
      expect({ line, found: at >= 0 }).toEqual({ line, found: true });
      return at;
    };
    const writerDone = order("null_resource.gpucloud_token_writer: Creation complete");
    const readDone = order(`${afterWrite.address}[0]: Read complete`);
    const consumerStart = order("null_resource.consumer: Creating...");
    expect(writerDone).toBeLessThan(readDone);
    expect(readDone).toBeLessThan(consumerStart);
    // The API as the consumer found it: the token created, and the logins of the writer and of the
    // read after the writes (the saved plan's read logged in before the stats were reset).
    const created = fx.named("read-depends-one");
    expect(created).toHaveLength(1);
    expect(
      seen()
        .data.tokens.filter((t) => t.name === "read-depends-one")
        .map((t) => t.id),
    ).toEqual([created[0].id]);
    expect(seen().data.stats).toEqual(expect.objectContaining({ logins: 2, tokenWrites: 1 }));

    // A rename: the read after the writes has no instance; the consumer still waits for the writer.
    folder.synth(build("read-depends-two"));
    fx.emulator.resetStats();
    const renamed = await tf.apply({ check: true });
    const writerRenamed = renamed.stdout.indexOf("null_resource.gpucloud_token_writer: Creation complete");
    expect(writerRenamed).toBeGreaterThanOrEqual(0);
    expect(renamed.stdout.indexOf("null_resource.consumer: Creating...")).toBeGreaterThan(writerRenamed);
    expect(renamed.stdout).not.toContain(`${afterWrite.address}[0]: Read`);
    expect(
      seen()
        .data.tokens.filter((t) => t.id === created[0].id)
        .map((t) => t.name),
    ).toEqual(["read-depends-two"]);
    // The plan-time read's login and the writer's: the rename was made when the consumer ran.
    expect(seen().data.stats).toEqual(expect.objectContaining({ logins: 2, tokenWrites: 1 }));
    expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
  });
});
