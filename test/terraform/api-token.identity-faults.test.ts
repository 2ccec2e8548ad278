/**
 * ApiToken identity under real Terraform when runs are interrupted, servers store another
 * spelling of a name, or several tokens carry one name (issue 17): never one more token per try,
 * never silent. Each case asserts Terraform's output AND the API's state.
 */
import { TerraformOutput } from "cdktf";

import { ApiToken, type ApiTokenProps } from "../../src";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { expectSteadyPlan } from "../support/steady-plan";
import { describeWithTerraform, oneLine, type TerraformRunner } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "faults-bot", password: "faults-password-4c1d" };

describeWithTerraform("ApiToken identity under interruptions, name-normalising servers and duplicates", () => {
  const fx = terraformFixture({ users: [USER] });

  class Project {
    readonly folder = fx.folder({ prefix: "gpucloud-idfaults-", stackId: "tokens" });
    readonly dir = this.folder.dir;
    tf!: TerraformRunner;
    constructor(readonly api: RunningEmulator = fx.emulator) {}

    synth(props: ApiTokenProps): this {
      this.folder.synth((stack) => {
        const token = new ApiToken(stack, "ci", props);
        new TerraformOutput(stack, "token_id", { value: token.tokenId });
      });
      return this;
    }

    /** Tokens `ci-0`.. `ci-<n-1>` named `<prefix>-<i>`, each id an output `id<i>`. */
    synthMany(prefix: string, n: number): this {
      this.folder.synth((stack) => {
        for (let i = 0; i < n; i++) {
          const token = new ApiToken(stack, `ci-${i}`, { name: `${prefix}-${i}` });
          new TerraformOutput(stack, `id${i}`, { value: token.tokenId });
        }
      });
      return this;
    }

    async init(): Promise<TerraformRunner> {
      this.tf = await fx.init(this.dir, { env: fx.env({}, USER, this.api), timeoutMs: 120_000 });
      return this.tf;
    }

    async steady(): Promise<string> {
      return (await expectSteadyPlan(this.tf)).stdout;
    }

    /** The state's ledger entry of `path`: [name, id, account]. */
    async ledgerEntry(path: string): Promise<unknown> {
      return (JSON.parse((await this.tf.output()).gpucloud_token_ledger.value as string) as { t: Record<string, unknown> }).t[path];
    }
  }

  const named = fx.named;

  test.each([
    ["trimmed", "trim-me ", "trim-me"],
    ["lower-cased", "Case-Me", "case-me"],
  ] as const)("a server that stores names %s: applies 1, 2 and 3 leave exactly one token, then no changes", async (how, name, stored) => {
    const api = await startEmulator({ users: [USER], storeNames: how });
    try {
      const p = new Project(api).synth({ name });
      const tf = await p.init();
      const first = oneLine((await tf.apply({ check: true })).stdout);
      const [token] = named(stored, api);
      expect(first).toContain(`created API token "${stored}" (id ${token.id}) for tokens/ci`);
      expect(first).toContain(`the API stored API token ${token.id}'s name as "${stored}"`);
      await tf.apply({ check: true });
      await tf.apply({ check: true });
      expect(api.tokens()).toEqual([expect.objectContaining({ id: token.id, name: stored })]);
      expect(api.stats().byRoute["POST /api-tokens"]).toBe(1);
      expect((await tf.output()).token_id.value).toBe(token.id);
      await p.steady();
    } finally {
      await api.close();
    }
  });

  test("SIGINT while the writer renames: the interrupted apply keeps the ledger it had; the next apply ends on the same token", async () => {
    const [oldName, newName] = ["int-old", "int-new"];
    const p = new Project().synth({ name: oldName });
    const tf = await p.init();
    await tf.apply({ check: true });
    const [old] = named(oldName);
    const count = fx.emulator.tokens().length;

    p.synth({ name: newName });
    // A slow rename, so that the signal lands while the writer's PUT is at the API.
    fx.emulator.setFaults({ latencyMs: 3_000, paths: ["/api-tokens/"] });
    try {
      const putsBefore = fx.emulator.stats().byRoute["PUT /api-tokens/{id}"] ?? 0;
      const { child, result } = await tf.start("apply", ["-auto-approve"]);
      let interrupted = false;
      const poll = setInterval(() => {
        if ((fx.emulator.stats().byRoute["PUT /api-tokens/{id}"] ?? 0) > putsBefore) {
          interrupted = true;
          clearInterval(poll);
          child.kill("SIGINT");
        }
      }, 20);
      void result.finally(() => clearInterval(poll));
      const stopped = await result;
      expect(interrupted).toBe(true);
      expect(stopped.exitCode).not.toBe(0);
      // The writer (or what is left of it once terraform is gone) lets its PUT finish: wait for its answer.
      await new Promise((r) => setTimeout(r, 4_000));
    } finally {
      fx.emulator.setFaults({});
    }
    // Whether or not the PUT was answered, the ledger is the last finished apply's: the old name, the old id.
    expect(await p.ledgerEntry("tokens/ci")).toEqual([oldName, old.id, expect.any(String), ""]);

    const retried = oneLine((await tf.apply({ check: true })).stdout);
    expect(retried).not.toContain("created API token");
    expect(fx.emulator.tokens()).toHaveLength(count);
    expect(named(oldName)).toEqual([]);
    expect(named(newName)).toEqual([expect.objectContaining({ id: old.id, token: old.token })]);
    expect((await tf.output()).token_id.value).toBe(old.id);
    expect(await p.ledgerEntry("tokens/ci")).toEqual([newName, old.id, expect.any(String), ""]);
    await p.steady();
  });

  test("terraform killed while the writer creates: the orphaned writer may finish its POSTs; the next apply leaves exactly one token per name", async () => {
    const n = 12;
    const p = new Project().synthMany("orph", n);
    const tf = await p.init();
    const names = Array.from({ length: n }, (_, i) => `orph-${i}`);
    // Slow token calls, so that terraform dies while the writer's POSTs (8 at once) are at the API. Told by the
    // API's own count, not by terraform's output, which a test process starved of CPU reads late.
    fx.emulator.setFaults({ latencyMs: 3_000, paths: ["/api-tokens"] });
    try {
      const postsBefore = fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0;
      const { child, result } = await tf.start("apply", ["-auto-approve"]);
      let killed = false;
      const poll = setInterval(() => {
        if ((fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0) > postsBefore) {
          killed = true;
          clearInterval(poll);
          child.kill("SIGKILL");
        }
      }, 20);
      void result.finally(() => clearInterval(poll));
      const stopped = await result;
      expect(killed).toBe(true);
      expect(stopped.signal).toBe("SIGKILL");
      // Nothing asks whether terraform is alive: the orphan's POSTs in flight are answered, their tokens created.
      let requests = -1;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && fx.emulator.stats().requests !== requests;) {
        requests = fx.emulator.stats().requests;
        await new Promise((r) => setTimeout(r, 4_000));
      }
    } finally {
      fx.emulator.setFaults({});
    }
    const orphaned = names.filter((name) => named(name).length > 0);
    expect(orphaned.length).toBeGreaterThan(0);
    for (const name of orphaned) expect(named(name)).toHaveLength(1);
    const ids = new Map(orphaned.map((name) => [name, named(name)[0].id]));
    expect((await tf.run("state", ["list"])).stdout).not.toContain("null_resource.gpucloud_token_writer");

    const postsBefore = fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0;
    const retried = oneLine((await tf.apply({ check: true })).stdout);
    // What the orphan created is found by name and kept; only the others are created.
    expect((fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0) - postsBefore).toBe(n - orphaned.length);
    for (const name of orphaned) expect(retried).not.toContain(`created API token "${name}"`);
    expect(names.filter((name) => named(name).length !== 1)).toEqual([]);
    const outputs = await tf.output();
    for (const [i, name] of names.entries()) expect(outputs[`id${i}`].value).toBe(named(name)[0].id);
    for (const [name, id] of ids) expect(named(name)[0].id).toBe(id);
    await p.steady();
  });

  test("several tokens with the managed name: plan and apply say so (ids, the one used); a switch of id is called out", async () => {
    const p = new Project().synth({ name: "dup-ci", description: "v1" });
    const tf = await p.init();
    await tf.apply({ check: true });
    const [mine] = named("dup-ci");
    const twin = fx.emulator.addToken({ name: "dup-ci", description: "v1" });

    const duplicates = `2 API tokens are named "dup-ci" (ids ${mine.id}, ${twin.id}); the stack uses ${mine.id}.`;
    const plan = await tf.plan({ detailedExitCode: true, check: true });
    expect(oneLine(plan.stdout)).toContain("Warning: Check block assertion failed");
    expect(oneLine(plan.stdout)).toContain(duplicates);
    expect(plan.exitCode).toBe(0); // a warning, nothing to change

    // An apply with a write (description) says so too, and keeps the token it had.
    p.synth({ name: "dup-ci", description: "v2" });
    const applied = oneLine((await tf.apply({ check: true })).stdout);
    expect(applied).toContain(duplicates);
    expect((await tf.output()).token_id.value).toBe(mine.id);

    // The stack's token revoked in the console: the name now resolves to the twin; the plan says so.
    fx.emulator.deleteToken(mine.id);
    const switched = oneLine((await tf.plan({ check: true })).stdout);
    expect(switched).toContain(
      `API token "dup-ci" now resolves to id ${twin.id}, not to id ${mine.id}, which the last apply managed and which no longer exists`,
    );
  });

  // A limit of the design (docs/token-lifecycle.md, "What can still produce a second token"): nothing outside the state
  // tells the read after the writes which of two tokens of the name the writer created; it takes the name's token
  // (the oldest), and every plan names both until one is revoked.
  test("a token of the same name appearing right after a create (another stack, a late commit): the stack takes one of the two, consistently, and every plan names both", async () => {
    let twin: string | undefined;
    // The emulator logs a request once it has answered it, before the client can send the next. A late commit:
    // listed only now, created a second before (in the same second, the two tie and the id decides).
    const api: RunningEmulator = await startEmulator({
      users: [USER],
      log: (line) => {
        if (!twin && line.startsWith("POST /api-tokens 200")) {
          twin = api.addToken({ name: "race-ci", createdAt: Math.floor(Date.now() / 1000) - 1 }).id;
        }
      },
    });
    try {
      const p = new Project(api).synth({ name: "race-ci" });
      const tf = await p.init();
      const raw = (await tf.apply({ check: true })).stdout;
      if (process.env.SHOW_OUTPUT) console.log(raw);
      const applied = oneLine(raw);
      const mine = named("race-ci", api).find((t) => t.id !== twin)!;
      expect(twin).toBeDefined();
      expect(applied).toContain(`created API token "race-ci" (id ${mine.id}) for tokens/ci`);
      // The writer does not look again after its creates: the apply's own log says nothing of the twin, and the
      // check block speaks for the plan-time read only (see the next plan).
      expect(applied).not.toContain("Check block assertion");
      const used = (await tf.output()).token_id.value as string;
      expect([mine.id, twin]).toContain(used);
      expect(await p.ledgerEntry("tokens/ci")).toEqual(["race-ci", used, expect.any(String), ""]);
      // Ids and names only: no secret in what the log prints.
      for (const secret of [USER.password, ...api.tokens().map((t) => t.token)]) expect(raw).not.toContain(secret);
      // Every plan after, until one is revoked, names both; the stack keeps the token it took.
      const plan = oneLine((await tf.plan({ detailedExitCode: true, check: true })).stdout);
      expect(plan).toMatch(
        new RegExp(`2 API tokens are named "race-ci" \\(ids (${mine.id}, ${twin}|${twin}, ${mine.id})\\); the stack uses ${used}\\.`),
      );
      expect(plan).toContain("No changes.");
    } finally {
      await api.close();
    }
  });
});
