/**
 * What the last apply managed, as the plan-time read learns it from the state (the ledger output,
 * `terraform output -json`), and what it concludes: the binary it runs and the environment it gives
 * it, what it says when it cannot, the account checks and the removal warning. Real Terraform runs
 * these in test/terraform/accounts-fresh-runners.test.ts; here stand-in binaries pin each case.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { decodeLedger, encodeLedger, type LedgerAccount, type LedgerToken } from "../../src/protocol";
import { TokenIndex } from "../../src/runtime/names/token-index";
import type { TokenView } from "../../src/runtime/names/token-list";
import { accountSwitch as switchOn, pinError, removedTokenWarnings as removedOn } from "../../src/runtime/reads/account-checks";
import { readLastApply } from "../../src/runtime/reads/last-apply";
import type { ManagedToken } from "../../src/runtime/reads/stack-query";
import { stackRead } from "../../src/runtime/reads/stack-read";
import { descriptionDigest } from "../../src/runtime/reads/token-observation";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";
import { NO_STATE_SCRIPT, standInTerraform } from "../support/fake-terraform";

/** The checks over a plain list, as a test writes it (the read passes an index). */
const accountSwitch = (
  managed: Parameters<typeof switchOn>[0],
  listed: TokenView[],
  ...rest: [LedgerAccount, Parameters<typeof switchOn>[3]]
) => switchOn(managed, new TokenIndex(listed), ...rest);
const removedTokenWarnings = (
  ledger: Parameters<typeof removedOn>[0],
  managed: Parameters<typeof removedOn>[1],
  listedOn: (a: LedgerAccount) => TokenView[] | undefined,
) =>
  removedOn(ledger, managed, (a) => {
    const listed = listedOn(a);
    return listed === undefined ? undefined : new TokenIndex(listed);
  });

const ALICE = { prefix: "GPUCLOUD_", api: "https://a.example", identity: "user alice" };
const BOB = { prefix: "GPUCLOUD_", api: "https://b.example", identity: "user bob" };

const managed = (name: string, over: Partial<ManagedToken> = {}): ManagedToken => ({
  slot: "t0",
  key: `k-${name}`,
  path: `s/${name}`,
  name,
  previousNames: [],
  valueInState: true,
  ...over,
  byLedger: over.byLedger ?? false,
  descriptionAtApply: over.descriptionAtApply ?? false,
});

describe("the ledger", () => {
  test("round-trips, keys sorted, each account once", () => {
    const tokens = new Map<string, LedgerToken>([
      ["s/b", { name: "b", id: "tok_b", account: BOB, description: "" }],
      ["s/a", { name: "a", id: "tok_a", account: ALICE, description: "" }],
      ["s/c", { name: "c", id: "tok_c", account: ALICE, description: "0123456789abcdef" }],
    ]);
    const text = encodeLedger(tokens);
    expect(text).toBe(
      '{"a":{"GPUCLOUD_ https://a.example":"user alice","GPUCLOUD_ https://b.example":"user bob"},' +
        '"t":{"s/a":["a","tok_a","GPUCLOUD_ https://a.example",""],"s/b":["b","tok_b","GPUCLOUD_ https://b.example",""],' +
        '"s/c":["c","tok_c","GPUCLOUD_ https://a.example","0123456789abcdef"]},"v":1}',
    );
    expect(decodeLedger(text)).toEqual(tokens);
    expect(decodeLedger('{"a":{},"t":{"s/a":["a","tok_a","GPUCLOUD_ https://a.example"]},"v":1}')).toBeUndefined();
    // Another version of the format is not read as this one.
    expect(decodeLedger(text.replace('"v":1', '"v":2'))).toBeUndefined();
    expect(decodeLedger(text.replace(',"v":1', ""))).toBeUndefined();
    expect(decodeLedger("not json")).toBeUndefined();
  });
});

describe("reading the last apply from the state", () => {
  const cwd = mkdtempSync(path.join(tmpdir(), "last-apply-"));
  const ledgerText = encodeLedger(new Map([["s/a", { name: "a", id: "tok_a", account: ALICE, description: "" }]]));

  test("the ledger output alone, run in the stack folder and workspace, without the plan's TF_CLI_ARGS or logging", async () => {
    const log = path.join(cwd, "env.txt");
    const bin = standInTerraform(
      `echo "$PWD|$*|$TF_WORKSPACE|\${TF_CLI_ARGS-unset}|\${TF_CLI_ARGS_output-unset}|\${TF_LOG-unset}|\${TF_LOG_PATH-unset}" > '${log}'\n` +
        `echo '${JSON.stringify(ledgerText)}'`,
    );
    const env = {
      GPUCLOUD_TERRAFORM: bin,
      TF_CLI_ARGS: "-lock-timeout=30s",
      TF_CLI_ARGS_output: "-x",
      TF_LOG: "trace",
      TF_LOG_PATH: "/tmp/x",
    };
    const read = await readLastApply(env, cwd, "prod", 10_000);
    expect(read).toEqual({ known: true, ledger: decodeLedger(ledgerText) });
    expect(readFileSync(log, "utf8").trim()).toBe(`${cwd}|output -no-color -json gpucloud_token_ledger|prod|unset|unset|unset|unset`);
  });

  test("no state yet, or a state without the library's writes: known, and nothing to compare", async () => {
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: standInTerraform(NO_STATE_SCRIPT) }, cwd, "default", 10_000)).toEqual({
      known: true,
      ledger: undefined,
    });
    const otherResources = standInTerraform(
      `case "$1" in output) echo 'Error: Output "gpucloud_token_ledger" not found' >&2; exit 1;; state) printf 'null_resource.mine\ndata.external.gpucloud-stack-read_read_1\n';; esac`,
    );
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: otherResources }, cwd, "default", 10_000)).toEqual({ known: true, ledger: undefined });
  });

  test("a state that holds the library's writes but no ledger (a first apply with -target): not known, saying so", async () => {
    const targeted = standInTerraform(
      `case "$1" in output) echo 'Error: Output "gpucloud_token_ledger" not found' >&2; exit 1;; state) printf 'data.external.x\nnull_resource.gpucloud_ci_sync_0A1B\n';; esac`,
    );
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: targeted }, cwd, "default", 10_000)).toEqual({
      known: false,
      reason:
        "the state holds this library's token writes (null_resource.gpucloud_ci_sync_0A1B) but no gpucloud_token_ledger output: a " +
        "first apply with -target (Terraform writes no output that refers to what it left out), or a destroy that did not finish " +
        "(it removes the outputs first)",
      fix: "Finish it with a full apply (no -target) or the destroy again, with these credentials checked as below",
    });
  });

  test("a full apply that ended before the ledger (the roster in the state, no ledger): known, saying so, for the next apply to finish", async () => {
    const unfinished = standInTerraform(
      `case "$1" in output) echo 'Error: Output "gpucloud_token_ledger" not found' >&2; exit 1;; ` +
        `state) printf 'terraform_data.gpucloud_token_roster[0]\nnull_resource.gpucloud_ci_sync_0A1B\n';; esac`,
    );
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: unfinished }, cwd, "default", 10_000)).toEqual({
      known: true,
      ledger: undefined,
      unfinished: expect.stringContaining("an apply of this stack ended before it wrote gpucloud_token_ledger"),
    });
  });

  test("any other failure of the output is not 'no ledger', whatever state list says; nor is a state list that fails", async () => {
    const transient = standInTerraform(
      `case "$1" in output) echo 'Error: error loading state: 503 Service Unavailable' >&2; exit 1;; ` +
        `state) printf 'terraform_data.gpucloud_token_roster[0]\n';; esac`,
    );
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: transient }, cwd, "default", 10_000)).toMatchObject({
      known: false,
      reason: expect.stringContaining("failed: Error: error loading state: 503 Service Unavailable"),
    });
    const listFails = standInTerraform(
      `case "$1" in output) echo 'Error: Output "gpucloud_token_ledger" not found' >&2; exit 1;; ` +
        `state) echo 'Error: Failed to load state: connection reset' >&2; exit 1;; esac`,
    );
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: listFails }, cwd, "default", 10_000)).toMatchObject({
      known: false,
      reason: `\`${listFails} state list\` failed: Error: Failed to load state: connection reset`,
    });
  });

  test("the accounts' secret variables and the plan's TF_CLI_ARGS_state are not passed; a read aborted before it starts runs nothing", async () => {
    const log = path.join(cwd, "secrets.txt");
    const bin = standInTerraform(
      `echo "\${GPUCLOUD_PASSWORD-unset}|\${GPUCLOUD_PROD_API_TOKEN-unset}|\${TF_CLI_ARGS_state-unset}|\${PG_CONN_STR-unset}" >> '${log}'\n${NO_STATE_SCRIPT}`,
    );
    const env = {
      GPUCLOUD_TERRAFORM: bin,
      GPUCLOUD_PASSWORD: "pw-1",
      GPUCLOUD_PROD_API_TOKEN: "tok-2",
      TF_CLI_ARGS_state: "-x",
      PG_CONN_STR: "pg",
    };
    await readLastApply(env, cwd, "default", 10_000, undefined, ["GPUCLOUD_PASSWORD", "GPUCLOUD_PROD_API_TOKEN"]);
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["unset|unset|unset|pg", "unset|unset|unset|pg"]);
    const aborted = new AbortController();
    aborted.abort();
    const started = path.join(cwd, "started.txt");
    const never = standInTerraform(`touch '${started}'`);
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: never }, cwd, "default", 10_000, aborted.signal)).toMatchObject({ known: false });
    expect(existsSync(started)).toBe(false);
  });

  test("cdktf's TERRAFORM_BINARY_NAME names it when GPUCLOUD_TERRAFORM does not", async () => {
    const read = await readLastApply({ TERRAFORM_BINARY_NAME: standInTerraform(NO_STATE_SCRIPT) }, cwd, "default", 10_000);
    expect(read.known).toBe(true);
  });

  test("what it cannot read says why, with no password of a backend URL", async () => {
    const failing = standInTerraform(`echo 'Error: failed to connect to postgres://ci:s3cret@db.example/tf' >&2; exit 1`);
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: failing }, cwd, "default", 10_000)).toEqual({
      known: false,
      reason: `\`${failing} output -json gpucloud_token_ledger\` failed: Error: failed to connect to postgres://[redacted]@db.example/tf`,
      fix: expect.stringContaining(`Make the state readable by \`${failing} output\` in this folder and workspace`),
    });
    // A password with "@" or "/" in the URL: nothing of the user information is left.
    const atSign = standInTerraform(`echo 'Error: failed to connect to postgres://ci:p@ss/w@db.example/tf?sslmode=x' >&2; exit 1`);
    const read = await readLastApply({ GPUCLOUD_TERRAFORM: atSign }, cwd, "default", 10_000);
    expect(read).toMatchObject({
      known: false,
      reason: expect.stringContaining("failed: Error: failed to connect to postgres://[redacted]@db.example/tf"),
    });
    expect(JSON.stringify(read)).not.toMatch(/p@ss|ss\/w/);
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: "/nonexistent/tf" }, cwd, "default", 10_000)).toEqual({
      known: false,
      reason: 'GPUCLOUD_TERRAFORM names "/nonexistent/tf", which cannot be found',
      fix: "Set GPUCLOUD_TERRAFORM to the terraform or tofu that runs this plan",
    });
    expect(await readLastApply({ PATH: "/nonexistent" }, cwd, "default", 10_000)).toEqual({
      known: false,
      reason: "no terraform or tofu on PATH",
      fix: "Set GPUCLOUD_TERRAFORM to the terraform or tofu that runs this plan (on Atlantis, its versioned binary)",
    });
    const foreign = standInTerraform(`echo '{"not":"ours"}'`);
    expect((await readLastApply({ GPUCLOUD_TERRAFORM: foreign }, cwd, "default", 10_000)).known).toBe(false);
    // Terraform takes SIGTERM as a request to finish what it waits for: a binary that ignores it is still stopped in time.
    const slow = standInTerraform("trap '' TERM; sleep 5");
    const started = Date.now();
    expect(await readLastApply({ GPUCLOUD_TERRAFORM: slow }, cwd, "default", 300)).toMatchObject({
      known: false,
      reason: `\`${slow} output -json gpucloud_token_ledger\` failed: no answer within 1 s`,
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test("a wrapper that does not exec: stopped with what it started, at the timeout and past the output bound", async () => {
    const pidFile = path.join(cwd, "grandchild.pid");
    // The wrapper's child keeps running (and holds the pipes) after the wrapper is killed, unless its group is.
    const wrapper = standInTerraform(`sh -c 'echo $$ > "${pidFile}"; trap "" TERM; sleep 30' & wait`);
    const started = Date.now();
    const read = await readLastApply({ GPUCLOUD_TERRAFORM: wrapper }, cwd, "default", 500);
    expect(read).toMatchObject({ known: false, reason: expect.stringContaining("no answer within 1 s") });
    expect(Date.now() - started).toBeLessThan(5_000);
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    expect(isAlive(grandchild)).toBe(false);

    const flood = standInTerraform("yes '\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"'");
    const bounded = await readLastApply({ GPUCLOUD_TERRAFORM: flood }, cwd, "default", 20_000);
    expect(bounded).toMatchObject({ known: false, reason: expect.stringContaining("printed more than 32 MiB") });
  });
});

/** Whether a process is still there: not gone, and not a zombie that no parent reaps (as under a pid 1 that reaps none). */
function isAlive(pid: number): boolean {
  for (let i = 0; i < 50; i++) {
    let state: string;
    try {
      state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] ?? "";
    } catch {
      return false;
    }
    if (state === "Z") return false;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  return true;
}

describe("the account checks", () => {
  const ledger = (account = ALICE) => ({ id: "tok_a", name: "a", account });
  const opts = { env: {}, workspace: "prod" };

  test("another identity or address that lists none of the tokens: refused, naming both sides and the move", () => {
    const { refusal } = accountSwitch([{ m: managed("a"), last: ledger() }], [], BOB, opts);
    expect(refusal).toContain(
      'log in as user bob at https://b.example, but the last apply of this stack (workspace "prod") managed its API tokens as ' +
        'user alice at https://a.example, and these credentials list none of them: "a" (id tok_a).',
    );
    expect(refusal).toContain('GPUCLOUD_MOVE_TO="user bob at https://b.example"');
  });

  test("the same account through another credential or address lists a token: nothing", () => {
    const listed = [{ id: "tok_a", name: "a", token: "", created_at: 1 }];
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], listed, BOB, opts)).toEqual({});
    // One token of the account revoked, another listed: the same account.
    const two = [
      { m: managed("a"), last: ledger() },
      { m: managed("b"), last: { id: "tok_b", name: "b", account: ALICE } },
    ];
    expect(accountSwitch(two, [{ id: "tok_b", name: "b", token: "", created_at: 1 }], BOB, opts)).toEqual({});
  });

  test("the same identity at the same address, the token revoked: nothing (the plan recreates it)", () => {
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], [], ALICE, opts)).toEqual({});
  });

  test("MOVE_TO naming this account: a warning that the old tokens stay active, not a refusal; another label: refused", () => {
    const moving = accountSwitch([{ m: managed("a"), last: ledger() }], [], BOB, {
      ...opts,
      env: { GPUCLOUD_MOVE_TO: " user bob at https://b.example " },
    });
    expect(moving.refusal).toBeUndefined();
    expect(moving.moving).toContain('stay ACTIVE there: "a" (id tok_a)');
    const other = accountSwitch([{ m: managed("a"), last: ledger() }], [], BOB, { ...opts, env: { GPUCLOUD_MOVE_TO: "user bob" } });
    expect(other.refusal).toBeDefined();
  });

  test("a token moved in code to another prefix: not compared", () => {
    const moved = { ...BOB, prefix: "GPUCLOUD_PROD_" };
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], [], moved, opts)).toEqual({});
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], [], BOB, opts).refusal).toBeDefined();
  });

  test("at another address, an id alone does not prove the same account: the name must match too", () => {
    const sameIdOtherToken = [{ id: "tok_a", name: "something-else", token: "", created_at: 1 }];
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], sameIdOtherToken, BOB, opts).refusal).toBeDefined();
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], [{ ...sameIdOtherToken[0], name: "A " }], BOB, opts)).toEqual({});
    // At the same address, the id is enough (a rename in the console keeps it).
    expect(accountSwitch([{ m: managed("a"), last: ledger() }], sameIdOtherToken, { ...ALICE, identity: "user carol" }, opts)).toEqual({});
  });

  test("a pin names a deployment: the identity at its address; the same user at another address is refused", () => {
    const pinned = [managed("a", { allowedIdentities: ["user alice at https://A.example/"] })];
    expect(pinError(pinned, ALICE)).toBeUndefined();
    expect(pinError(pinned, { ...ALICE, api: "https://staging.example" })).toContain(
      "log in as user alice at https://staging.example, which its GpuCloudAccount does not allow (allowedIdentities: user alice at https://A.example/)",
    );
    expect(pinError(pinned, BOB)).toContain('or add "user bob at https://b.example" to allowedIdentities');
  });

  test("removed ApiTokens: warned while their token is listed (or its account is not read); not when moved or revoked", () => {
    const tokens = new Map<string, LedgerToken>([
      ["s/gone", { name: "gone", id: "tok_gone", account: ALICE, description: "" }],
      ["s/moved", { name: "moved", id: "tok_moved", account: ALICE, description: "" }],
      ["s/revoked", { name: "revoked", id: "tok_revoked", account: ALICE, description: "" }],
      ["s/elsewhere", { name: "elsewhere", id: "tok_e", account: BOB, description: "" }],
    ]);
    const now = [managed("kept", { path: "s/kept" }), managed("moved-to", { path: "s/moved-to", previousNames: ["MOVED"] })];
    const listed = [{ id: "tok_gone", name: "gone", token: "", created_at: 1 }];
    const lines = removedTokenWarnings(tokens, now, (a) => (a.api === ALICE.api ? listed : undefined));
    expect(lines).toEqual([
      expect.stringContaining(
        'API token "gone" (id tok_gone) on user alice at https://a.example (account GPUCLOUD_*) stays ACTIVE: the ApiToken "s/gone"',
      ),
      expect.stringContaining(
        'API token "elsewhere" (id tok_e) on user bob at https://b.example (account GPUCLOUD_*) stays ACTIVE, unless it was revoked since',
      ),
    ]);
  });

  test("a removed token another ApiToken of its account may adopt (its name an expression, no entry of its own): the warning says so", () => {
    const tokens = new Map<string, LedgerToken>([["s/old", { name: "old", id: "tok_old", account: ALICE, description: "" }]]);
    const now = [managed("", { path: "s/new", byLedger: true })];
    const listed = [{ id: "tok_old", name: "old", token: "", created_at: 1 }];
    expect(removedTokenWarnings(tokens, now, () => listed)).toEqual([
      expect.stringContaining(
        'API token "old" (id tok_old) on user alice at https://a.example (account GPUCLOUD_*) stays ACTIVE, unless the ApiToken "s/new" has ' +
          'that name (given as an expression, known only at apply): the ApiToken "s/old" is no longer in the stack',
      ),
    ]);
  });
});

describe("the plan-time read and the state's ledger", () => {
  const USER = { username: "ledger-bot", password: "ledger-pw-4d1c" };
  let api: RunningEmulator;
  beforeAll(async () => {
    api = await startEmulator({ users: [USER] });
  });
  afterAll(() => api?.close());

  /** A plan-time read of `query` in a fresh folder, with a stand-in terraform whose output -json is `outputs`. */
  const plan = async (
    query: Record<string, string>,
    terraform: string,
    cwd = mkdtempSync(path.join(tmpdir(), "ledger-read-")),
    env: NodeJS.ProcessEnv = {},
  ) => {
    const lines: string[] = [];
    const ctx: RuntimeContext = {
      cwd,
      out: createOutput((t) => void lines.push(t), new Redactor([USER.password])),
      env: {
        TMPDIR: cwd,
        GPUCLOUD_BASE_URL: api.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TERRAFORM: terraform,
        ...env,
      },
    };
    return { result: await stackRead(ctx, { workspace: "default", ...query }), lines };
  };
  const here = () => ({ prefix: "GPUCLOUD_", api: api.url.replace(/\/+$/, ""), identity: `user ${USER.username}` });
  const stateWith = (ledger: ReadonlyMap<string, LedgerToken>) => standInTerraform(`echo '${JSON.stringify(encodeLedger(ledger))}'`);

  test("a token whose name is an expression (by_ledger): the ledger's id whatever its name now, its marker from the ledger", async () => {
    const token = api.addToken({ name: "by-ledger", description: "d" });
    const entry = { name: "by-ledger", id: token.id, account: here(), description: descriptionDigest("d") };
    const query = { "t0.by_ledger": "true", "t0.path": "s/t" };
    const inSync = await plan(query, stateWith(new Map([["s/t", entry]])));
    expect(inSync.result).toMatchObject({ "t0.id": token.id, "t0.in_sync": "true", "t0.token": token.token });
    // The read keeps the entry; the ledger output puts the configured name and digest over it.
    expect(decodeLedger(inSync.result.ledger)?.get("s/t")).toEqual(entry);
    // The description changed in the console: drift, the same id.
    const drifted = await plan(query, stateWith(new Map([["s/t", { ...entry, description: descriptionDigest("other") }]])));
    expect(drifted.result).toMatchObject({ "t0.id": token.id, "t0.in_sync": "false" });
    // No entry: nothing known at plan, whatever tokens the account has; the writer finds it by name.
    const fresh = await plan(query, stateWith(new Map()));
    expect(fresh.result).toMatchObject({ "t0.id": "", "t0.in_sync": "false" });
    expect(fresh.result["t0.reason"]).toContain("its name is an expression");
  });

  test("a token two ApiTokens designate is the one's whose token the last apply managed; not when that one no longer takes it", async () => {
    const t = api.addToken({ name: "held-x" });
    const entry = { name: "held-x", id: t.id, account: here(), description: "" };
    // s/b's name is now an expression (renamed away at apply); s/c is new and named as the token is now.
    const query = { "t0.by_ledger": "true", "t0.path": "s/b", "t1.name": "held-x", "t1.path": "s/c" };
    const { result } = await plan(query, stateWith(new Map([["s/b", entry]])));
    expect(result).toMatchObject({ "t0.id": t.id, "t1.id": "" });
    expect(result["t1.reason"]).toBe(`API token ${t.id} has this name, but the last apply managed it for the ApiToken "s/b"`);
    expect(decodeLedger(result.ledger)?.has("s/c")).toBe(false);
    // The token renamed in the console to s/c's name: s/b no longer finds it (it is created again), s/c adopts it.
    const u = api.addToken({ name: "held-z" });
    const renamed = { "t0.name": "held-y", "t0.path": "s/b", "t1.name": "held-z", "t1.path": "s/c" };
    const again = await plan(renamed, stateWith(new Map([["s/b", { ...entry, id: u.id, name: "held-y" }]])));
    expect(again.result).toMatchObject({ "t0.id": "", "t1.id": u.id });
  });

  test("a token known by its ledger entry renamed in the console while another token took its old name: the plan warns", async () => {
    const t = api.addToken({ name: "moved-away" });
    const other = api.addToken({ name: "back-name" });
    const entry = { name: "back-name", id: t.id, account: here(), description: "" };
    const { result } = await plan({ "t0.by_ledger": "true", "t0.path": "s/t" }, stateWith(new Map([["s/t", entry]])));
    expect(result).toMatchObject({ "t0.id": t.id, "t0.in_sync": "false" });
    expect(result.warnings).toContain(
      `API token ${t.id}, which the last apply managed as "back-name" for s/t, is now named "moved-away", and API token ${other.id} ` +
        `has "back-name": unless its configured name changed too, the apply will not rename it back`,
    );
  });

  test("a description only the apply knows (desc_at_apply): found by name, compared through the ledger; without an entry, written", async () => {
    const token = api.addToken({ name: "desc-later", description: "now" });
    const query = { "t0.name": "desc-later", "t0.path": "s/t", "t0.desc_at_apply": "true" };
    const entry = { name: "desc-later", id: token.id, account: here(), description: descriptionDigest("now") };
    expect((await plan(query, stateWith(new Map([["s/t", entry]])))).result).toMatchObject({ "t0.id": token.id, "t0.in_sync": "true" });
    const drifted = { ...entry, description: descriptionDigest("before") };
    expect((await plan(query, stateWith(new Map([["s/t", drifted]])))).result).toMatchObject({ "t0.in_sync": "false" });
    expect((await plan(query, stateWith(new Map()))).result).toMatchObject({ "t0.id": token.id, "t0.in_sync": "false" });
  });

  test("a token not found now keeps its ledger entry (revoked, or a refresh-only apply), so the next plan can still compare", async () => {
    const ledger = new Map([["s/gone", { name: "gone", id: "tok_gone", account: here(), description: "" }]]);
    const { result } = await plan({ "t0.name": "gone", "t0.path": "s/gone" }, stateWith(ledger));
    expect(decodeLedger(result.ledger)?.get("s/gone")).toEqual({ name: "gone", id: "tok_gone", account: here(), description: "" });
  });

  test("a token moving to this account (MOVE_TO) and not found here: its old account's entry is not carried forward", async () => {
    const elsewhere = { ...here(), identity: "user someone-else" };
    const ledger = new Map([["s/moving", { name: "moving", id: "tok_elsewhere", account: elsewhere, description: "" }]]);
    const { result } = await plan({ "t0.name": "moving", "t0.path": "s/moving" }, stateWith(ledger), undefined, {
      GPUCLOUD_MOVE_TO: `user ${USER.username} at ${here().api}`,
    });
    expect(result.warnings).toContain("stay ACTIVE there");
    expect(decodeLedger(result.ledger)?.has("s/moving")).toBe(false);
  });

  test("state that cannot be read: the plan fails, naming the three ways on, unless the account is pinned or unchecked on purpose", async () => {
    const failing = standInTerraform("echo 'Error: no backend' >&2; exit 1");
    const label = `user ${USER.username} at ${here().api}`;
    await expect(plan({ "t0.name": "a", "t1.name": "b" }, failing)).rejects.toThrow(
      new RegExp(
        "could not be read from its state \\(`.*` failed: Error: no backend\\), so this plan cannot tell .*Nothing was planned\\. " +
          "Make the state readable by .*or set GPUCLOUD_TERRAFORM .*Only if these are the credentials of the account this stack manages: " +
          `pin it with GpuCloudAccount's allowedIdentities: \\["${label}"\\].*GPUCLOUD_UNCHECKED_ACCOUNT="${label}"`,
      ),
    );
    const pinned = await plan({ "t0.name": "a", "t0.pin": JSON.stringify([label]) }, failing);
    expect(pinned.result.warnings).not.toContain("could not be read from its state");
    const unchecked = await plan({ "t0.name": "a" }, failing, undefined, { GPUCLOUD_UNCHECKED_ACCOUNT: label });
    expect(unchecked.result.warnings).toContain("GPUCLOUD_UNCHECKED_ACCOUNT lets this plan use the credentials of account GPUCLOUD_*");
    // Another account's label does not unlock these credentials.
    await expect(
      plan({ "t0.name": "a" }, failing, undefined, { GPUCLOUD_UNCHECKED_ACCOUNT: "user other at https://x.example" }),
    ).rejects.toThrow(/Nothing was planned/);
  });

  test("UNCHECKED_ACCOUNT left set where the state is read: a warning to remove it", async () => {
    const label = `user ${USER.username} at ${here().api}`;
    const { result } = await plan({ "t0.name": "a" }, standInTerraform(NO_STATE_SCRIPT), undefined, { GPUCLOUD_UNCHECKED_ACCOUNT: label });
    expect(result.warnings).toContain("GPUCLOUD_UNCHECKED_ACCOUNT is set, but this plan read what the last apply managed");
  });

  test("a construct moved in the code is matched by its name: another account's credentials still fail the plan", async () => {
    const elsewhere = { ...here(), identity: "user someone-else", api: "https://elsewhere.example" };
    const ledger = new Map([["s/old-path", { name: "moved-one", id: "tok_m", account: elsewhere, description: "" }]]);
    await expect(plan({ "t0.name": "moved-one", "t0.path": "s/new-path" }, stateWith(ledger))).rejects.toThrow(
      /managed its API tokens as user someone-else at https:\/\/elsewhere\.example.*"moved-one" \(id tok_m\)/,
    );
  });
});
