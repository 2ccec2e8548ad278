/**
 * The provisioners get the resource's triggers as one JSON value (GPUCLOUD_TOKEN_TRIGGERS), which
 * the script spreads into the variables the commands read.
 */
import { withTriggerEnv } from "../../src/runtime/tokens/token-scope";
import type { RuntimeContext } from "../../src/shared/context";
import { createOutput, Redactor } from "../../src/shared/output";

const context = (env: NodeJS.ProcessEnv): RuntimeContext => ({ cwd: "/", env, out: createOutput(() => undefined, new Redactor([])) });

describe("withTriggerEnv", () => {
  test("spreads every trigger into its variable; api_in_sync and unknown triggers are not variables", () => {
    const triggers = {
      name: "ci",
      description: "",
      key: "c8abc",
      workspace: "staging",
      path: "stack/ci",
      base_url: "https://api.example.test/v1",
      env_prefix: "GPUCLOUD_PROD_",
      api_in_sync: "true",
      added_later: "x",
    };
    const { env } = withTriggerEnv(context({ GPUCLOUD_TOKEN_TRIGGERS: JSON.stringify(triggers), PATH: "/bin" }));
    expect(env).toEqual({
      GPUCLOUD_TOKEN_TRIGGERS: JSON.stringify(triggers),
      PATH: "/bin",
      GPUCLOUD_TOKEN_NAME: "ci",
      // Present and empty: a managed empty description, not an unmanaged one.
      GPUCLOUD_TOKEN_DESCRIPTION: "",
      GPUCLOUD_TOKEN_KEY: "c8abc",
      GPUCLOUD_TOKEN_WORKSPACE: "staging",
      GPUCLOUD_TOKEN_PATH: "stack/ci",
      GPUCLOUD_TOKEN_BASE_URL: "https://api.example.test/v1",
      GPUCLOUD_TOKEN_ENV_PREFIX: "GPUCLOUD_PROD_",
    });
  });

  test("a trigger the resource lacks (an older state, an unmanaged description) leaves its variable unset, whatever the environment holds", () => {
    const { env } = withTriggerEnv(
      context({
        GPUCLOUD_TOKEN_TRIGGERS: JSON.stringify({ name: "ci", key: "c8abc" }),
        GPUCLOUD_TOKEN_DESCRIPTION: "from the pipeline's environment",
        GPUCLOUD_TOKEN_BASE_URL: "https://elsewhere.test",
      }),
    );
    expect(env.GPUCLOUD_TOKEN_NAME).toBe("ci");
    expect(env).not.toHaveProperty("GPUCLOUD_TOKEN_DESCRIPTION");
    expect(env).not.toHaveProperty("GPUCLOUD_TOKEN_BASE_URL");
    expect(env).not.toHaveProperty("GPUCLOUD_TOKEN_WORKSPACE");
  });

  test("without GPUCLOUD_TOKEN_TRIGGERS the context is used as it is", () => {
    const ctx = context({ GPUCLOUD_TOKEN_NAME: "ci", GPUCLOUD_TOKEN_KEY: "c8abc" });
    expect(withTriggerEnv(ctx)).toBe(ctx);
  });

  test.each(["not json", "[]", "null", '"text"'])("refuses %s, naming the variable only", (value) => {
    expect(() => withTriggerEnv(context({ GPUCLOUD_TOKEN_TRIGGERS: value }))).toThrow(
      "GPUCLOUD_TOKEN_TRIGGERS is not a JSON object (set by the ApiToken construct)",
    );
  });
});
