/**
 * The `gpucloud` CLI as a process (bundled from the sources, so never stale) against the
 * emulator, with credentials in the environment as a user would set them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { CLI_READER, ExitCode } from "../../src/cli/gpucloud";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { loadConfig } from "../../src/shared/config";
import { bundleProgram, type Ran, runProcess } from "../support/processes";

const PASSWORD = "cli-secret-password-77e1";
const root = path.join(__dirname, "../..");

describe("gpucloud CLI", () => {
  let dir: string;
  let script: string;
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gpucloud-cli-"));
    script = path.join(dir, "gpucloud.js");
    bundleProgram(path.join(root, "src/cli/gpucloud.ts"), script);
    emulator = await startEmulator({ users: [{ username: "cli-user", password: PASSWORD }] });
    env = { PATH: process.env.PATH, GPUCLOUD_BASE_URL: emulator.url, GPUCLOUD_USERNAME: "cli-user", GPUCLOUD_PASSWORD: PASSWORD };
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const printed: string[] = [];
  async function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Ran> {
    const ran = await runProcess(process.execPath, [script, ...args], { env: { ...env, ...extraEnv } });
    printed.push(ran.stdout, ran.stderr);
    return ran;
  }
  afterAll(() => {
    // Whatever the CLI printed in any test, the password never appears.
    expect(printed.length).toBeGreaterThan(0);
    for (const text of printed) expect(text).not.toContain(PASSWORD);
  });

  test("is the package's `gpucloud` bin, with a shebang; the emulator bin stays", () => {
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
    expect(pkg.bin).toEqual({ gpucloud: "lib/cli/gpucloud.js", "gpucloud-emulator": "lib/emulator/cli.js" });
    expect(readFileSync(path.join(root, "src/cli/gpucloud.ts"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  test("the compiled bin (lib/cli/gpucloud.js, from npm run build) lists flavors too", async () => {
    const bin = path.join(root, "lib/cli/gpucloud.js");
    const ran = await runProcess(process.execPath, [bin, "flavors", "--gpu", "h100-94g-nvl"], { env });
    printed.push(ran.stdout, ran.stderr);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/\nnorway-east-1 +n3-H100-NVLx1 +no1-h100-nvlx1 +H100-94G-NVL x1 /);
  });

  test("--help lists every option and the credential variables", async () => {
    const ran = await run(["flavors", "--help"]);
    expect(ran.code).toBe(0);
    for (const option of [
      "--region",
      "--gpu",
      "--gpu-count",
      "--min-gpu-count",
      "--min-cpu",
      "--min-ram",
      "--min-disk",
      "--in-stock",
      "--spot",
      "--no-spot",
      "--max-price",
      "--json",
      "--base-url",
    ]) {
      expect(ran.stdout).toContain(`  ${option}`);
    }
    // Every variable the CLI reads, each on a line of its own in the Environment section.
    const environment = ran.stdout.slice(ran.stdout.indexOf("\nEnvironment"), ran.stdout.indexOf("\nExit status"));
    for (const variable of [
      "GPUCLOUD_BASE_URL",
      "GPUCLOUD_API_TOKEN",
      "GPUCLOUD_USERNAME",
      "GPUCLOUD_PASSWORD",
      "GPUCLOUD_PASSWORD_MD5",
      "GPUCLOUD_TIMEOUT_SECONDS",
    ]) {
      expect(environment).toMatch(new RegExp(`^  ${variable} +\\S`, "m"));
    }
    expect((await run(["--help"])).stdout).toBe(ran.stdout);
  });

  test("--help's exit status table and docs/flavors.md's are the codes the CLI returns", async () => {
    const help = (await run(["--help"])).stdout;
    const helpCodes = [...help.slice(help.indexOf("\nExit status")).matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]));
    expect(helpCodes).toEqual(Object.values(ExitCode));
    const docs = readFileSync(path.join(root, "docs/flavors.md"), "utf8");
    const docCodes = [...docs.matchAll(/^\| (\d) \| /gm)].map((m) => Number(m[1]));
    expect(docCodes).toEqual(Object.values(ExitCode));
  });

  test("no command: the usage on stderr, nothing on stdout, exit 2", async () => {
    const ran = await run([]);
    expect(ran.code).toBe(ExitCode.USAGE);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toMatch(/^Usage: gpucloud flavors/);
  });

  test("prints a table sorted like Flavors, with the same matching (families, region case)", async () => {
    const ran = await run(["flavors", "--region", "NORWAY-EAST-1", "--gpu", "H100-80G", "--no-spot"]);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe("");
    const lines = ran.stdout.trimEnd().split("\n");
    expect(lines[0].split(/\s{2,}/)).toEqual(["REGION", "NAME", "ID", "GPU", "CPU", "RAM", "DISK", "PRICE/H", "STOCK"]);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/))).toEqual([
      ["norway-east-1", "n3-H100x1", "no1-h100x1", "H100-80G-PCIe x1", "28", "180 GB", "100 GB", "2.89", "yes"],
      ["norway-east-1", "n3-H100x2", "no1-h100x2", "H100-80G-PCIe x2", "56", "360 GB", "100 GB", "5.78", "yes"],
      ["norway-east-1", "n3-H100-SXM5x4", "no1-h100-sxm5x4", "H100-80G-SXM5 x4", "112", "720 GB", "100 GB", "11.56", "no"],
      ["norway-east-1", "n3-H100-SXM5x8", "no1-h100-sxm5x8", "H100-80G-SXM5 x8", "224", "1440 GB", "200 GB", "23.12", "yes"],
    ]);
  });

  test("--json prints the flavors with the construct's field names; every filter option applies", async () => {
    const ran = await run([
      "flavors",
      "--json",
      "--region",
      "us-east-1",
      "--region",
      "canada-central-1",
      "--gpu",
      "A100",
      "--gpu",
      "RTX-A6000",
      "--min-gpu-count",
      "2",
      "--in-stock",
      "--max-price",
      "7",
      "--min-cpu",
      "16",
      "--min-ram",
      "96",
      "--min-disk",
      "100",
    ]);
    expect(ran.code).toBe(0);
    const flavors = JSON.parse(ran.stdout);
    expect(flavors.map((f: any) => f.id)).toEqual(["ca1-a100x2", "us1-rtx-a6000x8"]);
    expect(Object.keys(flavors[0])).toEqual([
      "id",
      "name",
      "region_name",
      "region_id",
      "price",
      "cpu",
      "disk",
      "ephemeral",
      "ram",
      "gpu",
      "gpu_count",
      "stock_available",
      "bandwidth",
      "cycle",
    ]);
    const exact = JSON.parse((await run(["flavors", "--json", "--gpu", "H100", "--gpu-count", "8", "--spot"])).stdout);
    expect(exact.map((f: any) => f.id)).toEqual(["us1-h100-sxm5x8-spot"]);
  });

  test("no match: exit 0, nothing on stdout, the reason and the offer on stderr; --json prints []", async () => {
    const ran = await run(["flavors", "--region", "canada-central-1", "--gpu", "H100"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toContain(
      'no flavor matches (region id canada-central-1, gpu H100). region "Canada Central" (id canada-central-1) offers: ',
    );
    expect(JSON.parse((await run(["flavors", "--json", "--gpu", "H10"])).stdout)).toEqual([]);
  });

  test("an unknown region fails with the region ids that exist", async () => {
    const ran = await run(["flavors", "--region", "mars-1"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(
      'gpucloud: error: no region has id "mars-1"; the region ids that exist are: norway-east-1, canada-central-1, us-east-1',
    );
  });

  test("bad usage exits 2 with the reason", async () => {
    for (const [args, message] of [
      [["flavors", "--spot", "--no-spot"], "give --spot or --no-spot, not both"],
      [["flavors", "--gpu-count", "0"], '--gpu-count must be a whole number of at least 1, got "0"'],
      [["flavors", "--max-price", "free"], "--max-price must be a number greater than 0"],
      [["flavors", "--nope"], "Unknown option '--nope'"],
      [["tokens"], 'unknown command "tokens"'],
      [["flavors", "--base-url", "ftp://api.example.test"], "--base-url must be an http:// or https:// URL"],
    ] as const) {
      const ran = await run([...args]);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(message);
    }
  });

  test("credential problems name the variables, never the values: refused by the API 1, missing 3", async () => {
    const wrong = await run(["flavors", "--verbose"], { GPUCLOUD_PASSWORD: `${PASSWORD}-wrong` });
    expect(wrong.code).toBe(ExitCode.API);
    expect(wrong.stderr).toMatch(/invalid username or password/i);
    expect(wrong.stderr).not.toContain(`${PASSWORD}-wrong`);
    const requests = emulator.stats().requests;
    const none = await run(["flavors"], { GPUCLOUD_USERNAME: "", GPUCLOUD_PASSWORD: "" });
    expect(none.code).toBe(ExitCode.CONFIGURATION);
    // The CLI's own context: this shell, not Terraform's process.
    expect(none.stderr).toBe(
      "gpucloud: error: no credentials: set GPUCLOUD_API_TOKEN, or GPUCLOUD_USERNAME with GPUCLOUD_PASSWORD (plain text) " +
        "or GPUCLOUD_PASSWORD_MD5 (its md5 hex), in this shell's environment\n",
    );
    const budget = await run(["flavors"], { GPUCLOUD_TIMEOUT_SECONDS: "0" });
    expect(budget.code).toBe(ExitCode.CONFIGURATION);
    expect(budget.stderr).toContain("(the budget of one gpucloud command)");
    expect(emulator.stats().requests).toBe(requests);
    // --verbose says where the credentials came from, by variable name.
    const verbose = await run(["flavors", "--verbose", "--gpu", "L40S"]);
    expect(verbose.stderr).toContain("credentials from GPUCLOUD_USERNAME and GPUCLOUD_PASSWORD");
  });

  test("an address from --base-url is named as such where a message names the address", () => {
    const env = { GPUCLOUD_API_TOKEN: "t", GPUCLOUD_PROD_API_TOKEN: "t" };
    expect(loadConfig(env, "https://api.example.test", undefined, CLI_READER).baseUrlSource).toBe(
      "--base-url, which overrides GPUCLOUD_BASE_URL; the default account, GPUCLOUD_*",
    );
    expect(loadConfig(env, "https://api.example.test", "GPUCLOUD_PROD_", CLI_READER).baseUrlSource).toBe(
      "--base-url, which overrides GPUCLOUD_PROD_BASE_URL; account GPUCLOUD_PROD_*",
    );
  });

  test("--env-prefix reads another account's variables, and its secrets are never printed", async () => {
    const prodPassword = "cli-prod-password-5c3a";
    const prod = await startEmulator({ users: [{ username: "prod-user", password: prodPassword }] });
    try {
      const prodEnv = { GPUCLOUD_PROD_BASE_URL: prod.url, GPUCLOUD_PROD_USERNAME: "prod-user", GPUCLOUD_PROD_PASSWORD: prodPassword };
      const ran = await run(["flavors", "--env-prefix", "GPUCLOUD_PROD_", "--verbose", "--gpu", "L40S"], prodEnv);
      expect(ran.code).toBe(0);
      expect(ran.stderr).toContain("credentials from GPUCLOUD_PROD_USERNAME and GPUCLOUD_PROD_PASSWORD");
      expect(ran.stderr).toContain("logged in as prod-user");
      expect(prod.stats().logins).toBe(1);

      // A wrong password of that account: named by variable, its value hidden, like the default account's.
      const wrong = await run(["flavors", "--env-prefix", "GPUCLOUD_PROD_", "--verbose"], {
        ...prodEnv,
        GPUCLOUD_PROD_PASSWORD: `${prodPassword}-wrong`,
      });
      expect(wrong.code).toBe(1);
      expect(`${wrong.stdout}${wrong.stderr}`).not.toContain(prodPassword);

      const missing = await run(["flavors", "--env-prefix", "GPUCLOUD_PROD_"], { GPUCLOUD_PROD_BASE_URL: prod.url });
      expect(missing.code).toBe(ExitCode.CONFIGURATION);
      expect(missing.stderr).toContain(
        "no credentials: set GPUCLOUD_PROD_API_TOKEN, or GPUCLOUD_PROD_USERNAME with GPUCLOUD_PROD_PASSWORD",
      );

      // No address at all: the CLI names its own option and the variable, not a construct's prop.
      const noAddress = await run(["flavors", "--env-prefix", "GPUCLOUD_PROD_"], { GPUCLOUD_PROD_API_TOKEN: "x" });
      expect(noAddress.code).toBe(ExitCode.CONFIGURATION);
      expect(noAddress.stderr).toBe(
        "gpucloud: error: no API address: set GPUCLOUD_PROD_BASE_URL in this shell's environment, or pass --base-url URL\n",
      );

      const bad = await run(["flavors", "--env-prefix", "prod"]);
      expect(bad.code).toBe(ExitCode.USAGE);
      expect(bad.stderr).toContain("--env-prefix: the account's environment prefix must be upper-case letters");
      for (const text of [ran, wrong, missing].flatMap((r) => [r.stdout, r.stderr])) expect(text).not.toContain(prodPassword);
    } finally {
      await prod.close();
    }
  });
});
