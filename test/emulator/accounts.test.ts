import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { parseArgs } from "../../src/emulator/cli";
import { bearer, call, login } from "./helpers";

describe("emulator accounts", () => {
  let emu: RunningEmulator;
  beforeEach(async () => {
    emu = await startEmulator({
      users: [
        { username: "alice", password: "alice-pw", account: "staging" },
        { username: "bob", password: "bob-pw", account: "prod" },
        { username: "bea", password: "bea-pw", account: "prod" },
      ],
    });
  });
  afterEach(() => emu.close());

  test("each account sees and manages only its own tokens; users of one account share them", async () => {
    const alice = await login(emu, "alice", "alice-pw");
    const bob = await login(emu, "bob", "bob-pw");
    const bea = await login(emu, "bea", "bea-pw");
    const onStaging = await call(emu, "POST", "/api-tokens", { headers: alice.headers, body: { name: "ci" } });
    const onProd = await call(emu, "POST", "/api-tokens", { headers: bob.headers, body: { name: "ci" } });
    const names = async (headers: Record<string, string>) =>
      (await call(emu, "GET", "/api-tokens?limit=100", { headers })).json.data.map((t: { id: string }) => t.id);
    expect(await names(alice.headers)).toEqual([onStaging.json.data.id]);
    expect(await names(bob.headers)).toEqual([onProd.json.data.id]);
    expect(await names(bea.headers)).toEqual([onProd.json.data.id]);
    // Another account's token id is not found there.
    const foreign = await call(emu, "PUT", `/api-tokens/${onStaging.json.data.id}`, { headers: bob.headers, body: { name: "taken" } });
    expect(foreign.status).toBe(404);
    // An API token acts on the account that made it.
    expect(await names(bearer(onProd.json.data.token))).toEqual([onProd.json.data.id]);
    expect(
      emu
        .tokens()
        .map((t) => [t.account, t.name])
        .sort(),
    ).toEqual([
      ["prod", "ci"],
      ["staging", "ci"],
    ]);
    expect(emu.addToken({ name: "seeded", account: "prod" }).account).toBe("prod");
    expect(await names(bob.headers)).toHaveLength(2);
  });
});

describe("gpucloud-emulator accounts from the command line and the environment", () => {
  test("--user repeated: each user its own account; one user is the shared account as before", () => {
    expect(parseArgs(["--user", "a:1", "--user", "b:2"]).options.users).toEqual([
      { username: "a", password: "1", account: "a" },
      { username: "b", password: "2", account: "b" },
    ]);
    expect(parseArgs(["--user", "a:1"]).options.users).toEqual([{ username: "a", password: "1" }]);
  });

  test("the environment form: every GPUCLOUD_<NAME>_USERNAME/PASSWORD pair is an account of its own", () => {
    const env = {
      GPUCLOUD_USERNAME: "staging-bot",
      GPUCLOUD_PASSWORD: "s-pw",
      GPUCLOUD_PROD_USERNAME: "prod-bot",
      GPUCLOUD_PROD_PASSWORD: "p-pw",
      DOCKER_USERNAME: "not-ours",
      DOCKER_PASSWORD: "not-ours-pw",
    };
    expect(parseArgs([], env).options.users).toEqual([
      { username: "staging-bot", password: "s-pw", account: "GPUCLOUD_" },
      { username: "prod-bot", password: "p-pw", account: "GPUCLOUD_PROD_" },
    ]);
    expect(() => parseArgs([], { ...env, GPUCLOUD_PROD_PASSWORD: "" })).toThrow(
      /GPUCLOUD_PROD_USERNAME is set in this shell's environment but GPUCLOUD_PROD_PASSWORD is not: set both/,
    );
    expect(() => parseArgs([], { ...env, GPUCLOUD_PROD_USERNAME: "staging-bot" })).toThrow(/of another account too/);
  });
});
