/**
 * The stack's one read (`stack-read`) answering tokens and lookups together, run as
 * Terraform runs it (the bundled script, one process): one login and one catalog read per
 * account, the same answers as the lookups' own commands, and errors that name each failing lookup.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { runProcess, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";

const BUNDLE = path.join(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");
const STAGING = { username: "read-bot", password: "read-pw-3c81" };
const PROD = { username: "read-prod", password: "read-prod-pw-90a2" };

describe("the stack's read: tokens and lookups in one process", () => {
  let staging: RunningEmulator;
  let prod: RunningEmulator;
  const cwd = mkdtempSync(path.join(tmpdir(), "stack-read-"));
  const env = (): NodeJS.ProcessEnv => ({
    PATH: SCRIPT_PATH,
    GPUCLOUD_BASE_URL: staging.url,
    GPUCLOUD_USERNAME: STAGING.username,
    GPUCLOUD_PASSWORD: STAGING.password,
    GPUCLOUD_PROD_BASE_URL: prod.url,
    GPUCLOUD_PROD_USERNAME: PROD.username,
    GPUCLOUD_PROD_PASSWORD: PROD.password,
    GPUCLOUD_TIMEOUT_SECONDS: "20",
  });
  const run = async (command: string, query: Record<string, string>) => {
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, command], { cwd, env: env(), stdin: JSON.stringify(query) });
    return { ...ran, result: ran.code === 0 ? (JSON.parse(ran.stdout) as Record<string, string>) : undefined };
  };
  /** A lookup's part of the stack's query. */
  const lookup = (key: string, kind: string, path: string, query: Record<string, string>) =>
    Object.fromEntries(Object.entries({ lookup: kind, path, ...query }).map(([field, value]) => [`${key}.${field}`, value]));
  /** A lookup's fields of the stack's result, its key taken off. */
  const answer = (result: Record<string, string> | undefined, key: string) =>
    Object.fromEntries(
      Object.entries(result ?? {})
        .filter(([k]) => k.startsWith(`${key}.`))
        .map(([k, v]) => [k.slice(key.length + 1), v]),
    );

  beforeAll(async () => {
    staging = await startEmulator({ users: [STAGING] });
    prod = await startEmulator({ users: [PROD] });
  });
  afterAll(async () => {
    await staging?.close();
    await prod?.close();
  });

  test("one login and one catalog read per account answer every token and lookup, as the lookups' own commands would", async () => {
    staging.addToken({ name: "read-ci" });
    const h100 = { region_id: "norway-east-1", gpu: "H100", gpu_count: "1" };
    const a100 = { gpu: "A100-80G", allow_empty: "true" };
    const pick = {
      choice_count: "2",
      choice0_region_id: "norway-east-1",
      choice0_gpu: "H100",
      choice0_in_stock_only: "true",
      choice1_gpus: '["A100-80G","L40S"]',
    };
    const prodGpus = { region_id: "us-east-1", gpu: "H100", env_prefix: "GPUCLOUD_PROD_" };
    staging.resetStats();
    prod.resetStats();
    const ran = await run("stack-read", {
      workspace: "default",
      "t1.name": "read-ci",
      "t2.name": "read-prod",
      "t2.env_prefix": "GPUCLOUD_PROD_",
      ...lookup("f1", "flavors", "s/h100", h100),
      ...lookup("f2", "flavors", "s/a100", a100),
      ...lookup("p1", "flavor-preference", "s/pick", pick),
      ...lookup("f3", "flavors", "s/prod-gpus", prodGpus),
    });
    expect(ran.stderr).not.toContain("error");
    expect(ran.code).toBe(0);
    // One login, one list walk and one catalog call per account (a lookup without a region: the whole catalog at once).
    for (const emulator of [staging, prod]) {
      expect(emulator.stats().logins).toBe(1);
      expect(emulator.stats().byRoute["GET /api-tokens"]).toBe(1);
      expect(emulator.stats().byRoute["GET /flavors"]).toBe(1);
    }
    expect(ran.result!["t1.in_sync"]).toBe("true");
    expect(ran.result!["t2.reason"]).toBe('no API token is named "read-prod"');

    for (const [key, command, query] of [
      ["f1", "flavors", h100],
      ["f2", "flavors", a100],
      ["p1", "flavor-preference", pick],
      ["f3", "flavors", prodGpus],
    ] as const) {
      const alone = await run(command, query);
      expect(alone.code).toBe(0);
      expect(answer(ran.result, key)).toEqual(alone.result);
    }
    expect(Number(answer(ran.result, "f1").count)).toBeGreaterThan(0);
  });

  test.each([
    ["without tokens, as the read's error", false],
    ["with tokens, in the result: the tokens' read goes on (a plan of tokens with -target)", true],
  ])("every failing lookup is named by its construct path, the others are not: %s", async (_how, withTokens) => {
    const ran = await run("stack-read", {
      workspace: "default",
      ...(withTokens ? { "t1.name": "read-ci", "t1.path": "s/ci" } : {}),
      ...lookup("ok", "flavors", "s/fine", { gpu: "H100" }),
      ...lookup("empty", "flavors", "s/no-h100", { region_id: "canada-central-1", gpu: "H100" }),
      ...lookup("allowed", "flavors", "s/allowed", { region_id: "canada-central-1", gpu: "H100", allow_empty: "true" }),
      ...lookup("nowhere", "flavors", "s/nowhere", { region_id: "nowhere-1" }),
      ...lookup("pick", "flavor-preference", "s/pick", { choice_count: "1", choice0_region_id: "canada-central-1", choice0_gpu: "H100" }),
    });
    expect(ran.code).toBe(withTokens ? 0 : 1);
    const message = (withTokens ? ran.result!.lookup_errors : ran.stderr).replace(/\s+/g, " ");
    expect(message).toContain(
      `${withTokens ? "" : "gpucloud: error: stack-read: "}Flavors "s/no-h100": no flavor matches (region id canada-central-1, gpu H100). region "Canada Central"`,
    );
    if (withTokens) {
      expect(ran.result!["t1.in_sync"]).toBe("true");
      expect(answer(ran.result, "ok").count).not.toBe("0");
      // A failing lookup's fields are absent: whatever reads them fails rather than taking an empty value.
      expect(answer(ran.result, "empty")).toEqual({});
    }
    expect(message).toContain(
      'Flavors "s/nowhere": no region has id "nowhere-1"; the region ids that exist are: norway-east-1, canada-central-1, us-east-1',
    );
    expect(message).toContain(
      'FlavorPreference "s/pick": no choice of the preference matches: choice 0 (region id canada-central-1, gpu H100)',
    );
    expect(message).not.toContain("s/fine");
    expect(message).not.toContain("s/allowed");
    expect(ran.stderr).not.toContain(STAGING.password);
  });

  test("bad credentials fail the read with the account's message, as the plan-time read's did", async () => {
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
      cwd,
      env: { PATH: SCRIPT_PATH, GPUCLOUD_BASE_URL: staging.url, GPUCLOUD_USERNAME: STAGING.username, GPUCLOUD_PASSWORD: "wrong-pw-4711" },
      stdin: JSON.stringify(lookup("ok", "flavors", "s/fine", { gpu: "H100" })),
    });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/gpucloud: error: stack-read: .*(401|invalid username or password).* \(read for Flavors "s\/fine"\)/i);
    expect(ran.stderr).not.toContain("wrong-pw-4711");
  });

  test("an account's error names every construct reading there, tokens included; another account's lookups alone are theirs", async () => {
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
      cwd,
      // The default account has no password; the PROD account is fine.
      env: { ...env(), GPUCLOUD_PASSWORD: "" },
      stdin: JSON.stringify({
        workspace: "default",
        "t1.name": "read-ci",
        "t1.path": "s/ci",
        "t2.name": "read-other",
        "t2.path": "s/other",
        ...lookup("f1", "flavors", "s/gpus", { gpu: "H100" }),
        ...lookup("f2", "flavors", "s/prod-gpus", { gpu: "H100", env_prefix: "GPUCLOUD_PROD_" }),
      }),
    });
    expect(ran.code).toBe(1);
    const message = ran.stderr.replace(/\s+/g, " ");
    expect(message).toContain("GPUCLOUD_USERNAME is set but no password");
    expect(message).toContain('(read for ApiToken "s/ci", ApiToken "s/other", Flavors "s/gpus")');
    expect(message).not.toContain("s/prod-gpus");
  });

  test("the token walk's own error names the tokens, not the lookups", async () => {
    // A server error sent as HTTP 200 with status false, on the token list only: not retried, not the account's.
    staging.setFaults({ serverErrorRate: 1, errorsAsHttp200: true, paths: ["/api-tokens"] });
    try {
      // A short budget: the list is retried until it runs out.
      const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
        cwd,
        env: { ...env(), GPUCLOUD_TIMEOUT_SECONDS: "2" },
        stdin: JSON.stringify({
          workspace: "default",
          "t1.name": "read-ci",
          "t1.path": "s/ci",
          ...lookup("f1", "flavors", "s/gpus", { gpu: "H100" }),
        }),
      });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain("list API tokens (GET /api-tokens)");
      expect(ran.stderr.replace(/\s+/g, " ")).toMatch(/\(read for ApiToken "s\/ci"\)\s*$/);
    } finally {
      staging.setFaults({});
    }
  });
});
