/**
 * ApiToken identity under real Terraform when runs are interrupted, servers store another
 * spelling of a name, or several tokens carry one name (issue 17): never one more token per try,
 * never silent. Each case asserts Terraform's output AND the API's state.
 */
import { TerraformOutput } from "cdktf";

import { ApiToken, type ApiTokenProps } from "../../src";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { expectSteadyPlan } from "../support/steady-plan";
import { describeWithTerraform, handoffFiles, oneLine, type TerraformRunner } from "../support/terraform";
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

    async init(): Promise<TerraformRunner> {
      this.tf = await fx.init(this.dir, { env: fx.env({}, USER, this.api), timeoutMs: 120_000 });
      return this.tf;
    }

    async steady(): Promise<string> {
      return (await expectSteadyPlan(this.tf)).stdout;
    }

    handoffs(): string[] {
      return handoffFiles(this.dir);
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
      expect(first).toContain(`created API token "${stored}" (id ${token.id})`);
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

  test("SIGINT between the halves of a rename: the retry warns naming the old id and previousNames", async () => {
    // Terraform lets an operation it already started finish after a SIGINT; on a loaded machine the
    // create half may start before the signal lands, and the rename then completes. That run proves
    // nothing here, so the scenario is set up again (fresh names), at most three times.
    for (let attempt = 1; ; attempt++) {
      const [oldName, newName] = [`int-old-${attempt}`, `int-new-${attempt}`];
      const p = new Project().synth({ name: oldName });
      const tf = await p.init();
      await tf.apply({ check: true });
      const [old] = named(oldName);

      p.synth({ name: newName });
      const { child, result } = await tf.start("apply", ["-auto-approve"]);
      let seen = "";
      let interrupted = false;
      child.stdout?.on("data", (b: Buffer) => {
        seen += b.toString("utf8");
        if (!interrupted && /_sync\S*: Destruction complete/.test(seen)) {
          interrupted = true;
          child.kill("SIGINT");
        }
      });
      const stopped = await result;
      expect(interrupted).toBe(true);
      if (/token-apply/.test(stopped.stdout) && attempt < 3) {
        await tf.apply({ check: true });
        continue;
      }
      expect(stopped.stdout).not.toMatch(/token-apply/);
      expect(stopped.exitCode).not.toBe(0);
      expect(p.handoffs()).toHaveLength(1);

      // Terraform writes the interrupted apply's planned ledger (the new name with the old id), so the retry cannot
      // tell this from a token renamed in the console since: it creates the new name and says so (docs/token-lifecycle.md).
      const retried = oneLine((await tf.apply({ check: true })).stdout);
      const [created] = named(newName);
      expect(created.id).not.toBe(old.id);
      expect(retried).toContain(`WARNING: API token "${oldName}" (id ${old.id}) was released by an earlier terraform run`);
      expect(retried).toContain(`add previousNames: ["${oldName}"] to the ApiToken "tokens/ci"`);
      expect(named(oldName)).toEqual([expect.objectContaining({ id: old.id })]);
      await p.steady();
      return;
    }
  });

  test("terraform killed while a create half runs: the orphaned half may finish its write; the next apply adopts it, one token", async () => {
    // On a machine starved of CPU the kill can land after the create half ended and Terraform saved its resource: that run
    // proves nothing here (the retry has nothing to adopt), so the scenario is set up again (a fresh name), at most three times.
    for (let attempt = 1; ; attempt++) {
      const name = `orph-ci-${attempt}`;
      const p = new Project().synth({ name });
      const tf = await p.init();
      // Slow token calls, so that terraform dies while the create half's POST is at the API (3 s before its answer, and 3 more
      // for its look after the create: a test process starved of CPU still kills before the provisioner ends).
      // Told by the API's own count, not by terraform's output, which a test process starved of CPU reads late.
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
        // Nothing asks whether terraform is alive: the orphan's POST is answered, the token created.
        const deadline = Date.now() + 20_000;
        while (named(name).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      } finally {
        fx.emulator.setFaults({});
      }
      expect(named(name)).toHaveLength(1);
      const [orphaned] = named(name);
      const saved = (await tf.run("state", ["list"])).stdout;
      if (/gpucloud_ci_sync/.test(saved) && attempt < 3) continue;

      const retried = oneLine((await tf.apply({ check: true })).stdout);
      // The orphan recorded what it applied, or at least its pending write: either way the same token.
      expect(retried).toMatch(
        new RegExp(
          `(adopted (existing )?API token "${name}" \\(id ${orphaned.id}\\)|API token "${name}" \\(id ${orphaned.id}\\) is up to date)`,
        ),
      );
      expect(retried).not.toContain("created API token");
      // The killed first apply left the roster and no ledger: the retry cannot check the account, and says so (docs/accounts.md).
      expect(retried).toContain("an apply of this stack ended before it wrote gpucloud_token_ledger");
      expect(named(name)).toEqual([expect.objectContaining({ id: orphaned.id })]);
      expect((await tf.output()).token_id.value).toBe(orphaned.id);
      await p.steady();
      return;
    }
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

  test("a token of the same name appearing right after a create (another stack, a late commit): the apply and the next plan say so", async () => {
    let twin: string | undefined;
    // The emulator logs a request once it has answered it, before the client can send the next.
    const api: RunningEmulator = await startEmulator({
      users: [USER],
      log: (line) => {
        if (!twin && line.startsWith("POST /api-tokens 200")) twin = api.addToken({ name: "race-ci" }).id;
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
      expect(applied).toContain(`created API token "race-ci" (id ${mine.id})`);
      expect(applied).toContain(`another API token named "race-ci" exists besides the one just created (id ${twin})`);
      // The create half's own look says it in the apply's log; the check block speaks for the plan-time read only
      // (an assertion over the reads after the writes would be "known after apply" in every plan that writes).
      expect(applied).toContain(`This stack uses ${mine.id}; revoke the other in the console if nothing uses it.`);
      expect(applied).not.toContain("Check block assertion");
      expect((await tf.output()).token_id.value).toBe(mine.id);
      // Ids and names only: no secret in what the warnings print.
      for (const secret of [USER.password, ...api.tokens().map((t) => t.token)]) expect(raw).not.toContain(secret);
      // And every plan after, until one is revoked; the stack keeps its own token.
      const plan = oneLine((await tf.plan({ detailedExitCode: true, check: true })).stdout);
      expect(plan).toMatch(new RegExp(`2 API tokens are named "race-ci" \\(ids [^)]*\\); the stack uses ${mine.id}\\.`));
      expect(plan).toContain("No changes.");
    } finally {
      await api.close();
    }
  });
});
