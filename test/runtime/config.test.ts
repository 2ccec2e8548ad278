import { parseQuery } from "../../src/runtime/main";
import { ConfigError, loadConfig, secretValues } from "../../src/shared/config";
import { createOutput, Redactor } from "../../src/shared/output";

const BASE = { GPUCLOUD_BASE_URL: "http://127.0.0.1:1" };

describe("loadConfig", () => {
  test("prefers an API token and says where credentials came from, not what they are", () => {
    const config = loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "tok-value", GPUCLOUD_USERNAME: "alice", GPUCLOUD_PASSWORD: "pw" });
    expect(config.credentials).toEqual({ apiToken: "tok-value" });
    expect(config.credentialSource).toBe("GPUCLOUD_API_TOKEN");
  });

  test("takes a plain password exactly as given, spaces included", () => {
    const config = loadConfig({ ...BASE, GPUCLOUD_USERNAME: "alice", GPUCLOUD_PASSWORD: " pw " });
    expect(config.credentials).toEqual({ username: "alice", password: " pw " });
  });

  test("takes an md5 password", () => {
    const md5 = "5f4dcc3b5aa765d61d8327deb882cf99";
    expect(loadConfig({ ...BASE, GPUCLOUD_USERNAME: "a", GPUCLOUD_PASSWORD_MD5: md5 }).credentials).toEqual({
      username: "a",
      passwordMd5: md5,
    });
  });

  test("the construct's baseUrl overrides the environment", () => {
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234" }, "https://other.test").baseUrl).toBe("https://other.test");
  });

  test("says where the base URL came from and whose account it is, for the message of an API that cannot be reached", () => {
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234" }).baseUrlSource).toBe(
      "from GPUCLOUD_BASE_URL; the default account, GPUCLOUD_*",
    );
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234" }, "https://other.test").baseUrlSource).toBe(
      "the baseUrl prop of the construct (or of its GpuCloudAccount), which overrides GPUCLOUD_BASE_URL; the default account, GPUCLOUD_*",
    );
    const staging = { GPUCLOUD_STAGING_BASE_URL: "https://staging.test", GPUCLOUD_STAGING_API_TOKEN: "t-5678" };
    expect(loadConfig(staging, undefined, "GPUCLOUD_STAGING_").baseUrlSource).toBe(
      "from GPUCLOUD_STAGING_BASE_URL; account GPUCLOUD_STAGING_*",
    );
    expect(loadConfig(staging, "https://other.test", "GPUCLOUD_STAGING_").baseUrlSource).toBe(
      "the baseUrl of the GpuCloudAccount with envPrefix GPUCLOUD_STAGING_, which overrides GPUCLOUD_STAGING_BASE_URL",
    );
  });

  test("the time budget comes from GPUCLOUD_TIMEOUT_SECONDS", () => {
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234", GPUCLOUD_TIMEOUT_SECONDS: "2.5" }).totalTimeoutMs).toBe(2500);
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234" }).totalTimeoutMs).toBe(120_000);
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234", GPUCLOUD_TIMEOUT_SECONDS: "86400" }).totalTimeoutMs).toBe(86_400_000);
    expect(loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "t-1234", GPUCLOUD_TIMEOUT_SECONDS: "1" }).totalTimeoutMs).toBe(1000);
  });

  const failures: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    ["no base URL", { GPUCLOUD_API_TOKEN: "t-1234" }, /set GPUCLOUD_BASE_URL/],
    ["a base URL that is not http", { GPUCLOUD_BASE_URL: "ftp://x", GPUCLOUD_API_TOKEN: "t" }, /must be an http/],
    [
      "no credentials",
      { ...BASE },
      /no credentials: set GPUCLOUD_API_TOKEN, or GPUCLOUD_USERNAME with GPUCLOUD_PASSWORD .* or GPUCLOUD_PASSWORD_MD5/,
    ],
    ["a password without user", { ...BASE, GPUCLOUD_PASSWORD: "pw" }, /GPUCLOUD_USERNAME is not set/],
    ["a user without password", { ...BASE, GPUCLOUD_USERNAME: "a" }, /set GPUCLOUD_PASSWORD or GPUCLOUD_PASSWORD_MD5/],
    [
      "both password forms",
      { ...BASE, GPUCLOUD_USERNAME: "a", GPUCLOUD_PASSWORD: "p", GPUCLOUD_PASSWORD_MD5: "5f4dcc3b5aa765d61d8327deb882cf99" },
      /only one of/,
    ],
    ["a malformed md5", { ...BASE, GPUCLOUD_USERNAME: "a", GPUCLOUD_PASSWORD_MD5: "not-a-hash-value" }, /32 hexadecimal/],
    [
      "a bad timeout",
      { ...BASE, GPUCLOUD_API_TOKEN: "t", GPUCLOUD_TIMEOUT_SECONDS: "soon" },
      /GPUCLOUD_TIMEOUT_SECONDS must be a number of seconds from 1 to 86400 \(the budget of one script run\), got "soon"/,
    ],
    ["a timeout below 1 s", { ...BASE, GPUCLOUD_API_TOKEN: "t", GPUCLOUD_TIMEOUT_SECONDS: "0.5" }, /from 1 to 86400.*got "0\.5"/],
    [
      "a timeout that would overflow Node's timers",
      { ...BASE, GPUCLOUD_API_TOKEN: "t", GPUCLOUD_TIMEOUT_SECONDS: "2147470" },
      /from 1 to 86400.*got "2147470"/,
    ],
    ["a timeout above a day", { ...BASE, GPUCLOUD_API_TOKEN: "t", GPUCLOUD_TIMEOUT_SECONDS: "86401" }, /from 1 to 86400/],
  ];
  test.each(failures)("rejects %s with a message naming the variables", (_label, env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  test("never quotes a secret in its errors", () => {
    try {
      loadConfig({ ...BASE, GPUCLOUD_USERNAME: "a", GPUCLOUD_PASSWORD_MD5: "secret-but-malformed" });
      throw new Error("expected a failure");
    } catch (err) {
      expect((err as Error).message).not.toContain("secret-but-malformed");
    }
  });
});

describe("Redactor and output", () => {
  test("hides every secret, longest first, including ones learnt later", () => {
    const lines: string[] = [];
    const out = createOutput((t) => lines.push(t), new Redactor(["password-1", "password-12", undefined, "abc"]));
    out.info("got password-12 and password-1");
    out.addSecrets(["eyJtoken.value"]);
    out.warn("token eyJtoken.value leaked?");
    expect(lines).toEqual(["gpucloud: got [redacted] and [redacted]\n", "gpucloud: WARNING: token [redacted] leaked?\n"]);
    // A short value is hidden where it stands as a word, not inside longer words (which it would shred).
    expect(new Redactor(["abc"]).redact("pw abc, abcdef")).toBe("pw [redacted], abcdef");
  });

  test("hides an md5 in any letter case and a secret's JSON-escaped form in printed lines", () => {
    const lines: string[] = [];
    const md5 = "0123456789abcdef0123456789abcdef";
    const out = createOutput((t) => lines.push(t), new Redactor([md5, 'pa"ss\\word']));
    out.warn(`server said: bad hash ${md5.toUpperCase()} for "pa\\"ss\\\\word"`);
    expect(lines).toEqual(['gpucloud: WARNING: server said: bad hash [redacted] for "[redacted]"\n']);
  });
});

describe("parseQuery", () => {
  test("accepts an object of strings, and empty input", () => {
    expect(parseQuery('{"name":"ci","gpu":"H100"}')).toEqual({ name: "ci", gpu: "H100" });
    expect(parseQuery("  ")).toEqual({});
  });
  test.each([
    ["not json", /not JSON/],
    ["[1]", /must be a JSON object/],
    ['{"n":1}', /query\.n must be a string/],
  ])("rejects %s", (text, message) => {
    expect(() => parseQuery(text)).toThrow(message);
  });
});

describe("accounts (environment prefixes)", () => {
  const PROD = { GPUCLOUD_PROD_BASE_URL: "http://127.0.0.1:2", GPUCLOUD_PROD_USERNAME: "prod-user", GPUCLOUD_PROD_PASSWORD: "prod-pw-1" };

  test("an account reads its own variables, never the default account's", () => {
    const config = loadConfig({ ...BASE, GPUCLOUD_API_TOKEN: "default-token", ...PROD }, undefined, "GPUCLOUD_PROD_");
    expect(config.baseUrl).toBe("http://127.0.0.1:2");
    expect(config.credentials).toEqual({ username: "prod-user", password: "prod-pw-1" });
    expect(config.credentialSource).toBe("GPUCLOUD_PROD_USERNAME and GPUCLOUD_PROD_PASSWORD");
  });

  test("missing variables are named for that account only", () => {
    const env = { ...BASE, GPUCLOUD_API_TOKEN: "default-token", GPUCLOUD_PROD_BASE_URL: "http://127.0.0.1:2" };
    let message = "";
    try {
      loadConfig(env, undefined, "GPUCLOUD_PROD_");
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(
      /^no credentials: set GPUCLOUD_PROD_API_TOKEN, or GPUCLOUD_PROD_USERNAME with GPUCLOUD_PROD_PASSWORD \(plain text\) or GPUCLOUD_PROD_PASSWORD_MD5/,
    );
    expect(message).not.toMatch(/GPUCLOUD_(API_TOKEN|USERNAME|PASSWORD)/);
    expect(() => loadConfig({ GPUCLOUD_PROD_API_TOKEN: "t-1234" }, undefined, "GPUCLOUD_PROD_")).toThrow(
      /^no API address: set GPUCLOUD_PROD_BASE_URL in the environment/,
    );
  });

  test("a malformed prefix from a tampered configuration is refused", () => {
    expect(() => loadConfig({ ...PROD }, undefined, "gpucloud_prod_")).toThrow(ConfigError);
    expect(() => loadConfig({ ...PROD }, undefined, "GPUCLOUD_WRITER_")).toThrow(ConfigError);
  });

  test("every account's secrets are redacted, used in this run or not", () => {
    const env = {
      GPUCLOUD_PASSWORD: "default-pw-1",
      GPUCLOUD_PROD_PASSWORD: "prod-pw-22",
      GPUCLOUD_PROD_PASSWORD_MD5: "0123456789abcdef0123456789abcdef",
      STAGING_API_TOKEN: "staging-token-333",
      GPUCLOUD_PROD_USERNAME: "prod-user",
    };
    const redactor = new Redactor(secretValues(env));
    const line = redactor.redact("default-pw-1 prod-pw-22 0123456789abcdef0123456789abcdef staging-token-333 prod-user");
    expect(line).toBe("[redacted] [redacted] [redacted] [redacted] prod-user");
  });
});
