/**
 * `valueInState: false` and `ApiToken.ephemeralToken`, proven with real Terraform (offline,
 * through the provider doubles, hashicorp/local's ephemeral local_command included) against the
 * emulator: the value reaches its consumers and nothing Terraform stores or prints holds it.
 * Runs on both flavours (`npm run test:cdktn` maps cdktf to CDK Terrain, where the ephemeral
 * block comes from TerraformEphemeralResource instead of the stack's JSON).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { TerraformHclModule, TerraformOutput, type TerraformStack } from "cdktf";

import { ApiToken } from "../../src";
import { describeWithTerraform, oneLine } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "ephemeral-bot", password: "ephemeral-password-9d2a" };

/**
 * CDK Terrain checks a project's declared targets (cdktf.json `targetVersions`, here the App's
 * context) against the features it synthesizes: ephemeral resources need Terraform >= 1.10.
 * cdktf ignores the key.
 */
const CONTEXT = { targetVersions: { terraform: ">=1.10.0" } };

/** A module whose input variable and output are ephemeral: where Terraform allows an ephemeral output. */
const MODULE = `
variable "token" {
  type      = string
  ephemeral = true
}
output "token" {
  value     = var.token
  ephemeral = true
}
`;

interface StackProps {
  readonly name: string;
  readonly previousNames?: string[];
  readonly description?: string;
  readonly valueInState?: boolean;
  /** Adds the consumers of ephemeralToken. */
  readonly consumers?: boolean;
}

/** The secret's pieces: any 8 characters of it found in `text`. */
function leakedPieces(text: string, secret: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) pieces.push(secret.slice(i, i + 8));
  return pieces;
}

describeWithTerraform("ApiToken valueInState: false and ephemeralToken under real Terraform", () => {
  const fx = terraformFixture({ users: [USER] });
  /** Every command's output, of every stack of this file. */
  let log = "";

  /** A stack folder synthesized again for each configuration, as `cdktf synth` does on each deploy. */
  function stackFolder(prefix: string) {
    const folder = fx.folder({ prefix, context: CONTEXT });
    const { outdir, dir: stackDir } = folder;
    const files = {
      direct: path.join(outdir, "direct.out"),
      viaModule: path.join(outdir, "module.out"),
      second: path.join(outdir, "second.out"),
    };
    const synth = (props: StackProps) => {
      folder.synth((stack) => buildStack(stack, props));
      mkdirSync(path.join(stackDir, "relay"), { recursive: true });
      writeFileSync(path.join(stackDir, "relay", "main.tf"), MODULE);
    };
    const buildStack = (stack: TerraformStack, props: StackProps) => {
      const token = new ApiToken(stack, "token", {
        name: props.name,
        previousNames: props.previousNames,
        description: props.description,
        valueInState: props.valueInState,
      });
      new TerraformOutput(stack, "token_id", { value: token.tokenId });
      if (props.consumers) {
        // A second token of the stack: its value comes from the same script run as the first one's.
        const second = new ApiToken(stack, "second", { name: "eph-second", valueInState: false });
        new Resource(stack, "second-consumer", {
          provisioners: [{ type: "local-exec", command: `printf %s "$V" > ${files.second}`, environment: { V: second.ephemeralToken } }],
        });
        // A consumer of the value, rerun whenever the token's configuration changes.
        new Resource(stack, "direct", {
          triggers: { name: props.name, description: props.description ?? "" },
          provisioners: [
            {
              type: "local-exec",
              command: `printf %s "$TOKEN_VALUE" > ${files.direct}`,
              environment: { TOKEN_VALUE: token.ephemeralToken },
            },
          ],
        });
        // Through a module's ephemeral variable and ephemeral output.
        const mod = new TerraformHclModule(stack, "relay", {
          source: "./relay",
          skipAssetCreationFromLocalModules: true,
          variables: { token: token.ephemeralToken },
        });
        new Resource(stack, "via-module", {
          triggers: { name: props.name, description: props.description ?? "" },
          provisioners: [
            {
              type: "local-exec",
              command: `printf %s "$TOKEN_VALUE" > ${files.viaModule}`,
              environment: { TOKEN_VALUE: mod.get("token") },
            },
          ],
        });
      }
    };
    const tf = fx.runner(stackDir);
    const run = async (sub: string, args: string[] = []) => {
      const res = await tf.run(sub, args, { check: true });
      log += res.stdout + res.stderr;
      return res;
    };
    const state = () => readFileSync(path.join(stackDir, "terraform.tfstate"), "utf8");
    return { stackDir, files, synth, tf, run, state };
  }

  const valueOf = (name: string) => {
    const found = fx.named(name);
    expect(found).toHaveLength(1);
    return found[0].token;
  };

  test("the value reaches a provisioner and a module's ephemeral variable and output; no state, plan, show or log holds any 8 characters of it, also after a rename and a description change", async () => {
    const s = stackFolder("gpucloud-ephemeral-");
    const reads = () => fx.emulator.stats().byRoute["GET /api-tokens"] ?? 0;
    const logins = () => fx.emulator.stats().byRoute["POST /authenticate/login"] ?? 0;
    s.synth({ name: "eph-one", description: "v1", valueInState: false, consumers: true });
    await s.run("init");
    let loginsBefore = logins();
    const applied = await s.run("apply", ["-auto-approve"]);
    // One login per script process (no shared session): the plan-time read, the writer, the read after
    // the writes and the values' read at apply; the ephemeral block is not opened at plan while the
    // token's id is unknown. The ceiling with ephemeralToken is 5.
    expect(logins() - loginsBefore).toBe(4);
    // Terraform itself keeps the provisioner's output out of the log.
    expect(applied.stdout).toMatch(/output suppressed due to (sensitive, )?ephemeral value in config/);
    const value = valueOf("eph-one");
    expect(value.length).toBeGreaterThanOrEqual(16);
    const secondValue = valueOf("eph-second");
    expect(readFileSync(s.files.second, "utf8")).toBe(secondValue);

    const checkEverything = async (step: string) => {
      expect({ step, direct: readFileSync(s.files.direct, "utf8") }).toEqual({ step, direct: value });
      expect({ step, viaModule: readFileSync(s.files.viaModule, "utf8") }).toEqual({ step, viaModule: value });
      const planFile = path.join(s.stackDir, "saved.tfplan");
      const before = reads();
      const planned = await s.run("plan", [`-out=${planFile}`, "-detailed-exitcode"]).catch((e: unknown) => {
        throw e;
      });
      // Steady: nothing to change, and the ephemeral resource was opened at plan time.
      expect(planned.stdout).toMatch(/No changes\./);
      expect(planned.stdout.match(/ephemeral\.local_command\.\S+: Opening\.\.\./g)).toHaveLength(1);
      // One list walk for the stack's read, one for both tokens' values (the list fits one page).
      expect(reads() - before).toBe(2);
      const shownPlan = await s.run("show", ["-json", planFile]);
      const shown = await s.run("show");
      const shownJson = await s.run("show", ["-json"]);
      expect({ step, plan: leakedPieces(readFileSync(planFile).toString("latin1"), value) }).toEqual({ step, plan: [] });
      expect({ step, planJson: leakedPieces(shownPlan.stdout, value) }).toEqual({ step, planJson: [] });
      expect({ step, show: leakedPieces(shown.stdout + shownJson.stdout, value) }).toEqual({ step, show: [] });
      expect({ step, state: leakedPieces(s.state(), value) }).toEqual({ step, state: [] });
      expect({ step, log: leakedPieces(log, value) }).toEqual({ step, log: [] });
      const everything = log + s.state() + shownPlan.stdout + readFileSync(planFile).toString("latin1");
      expect({ step, second: leakedPieces(everything, secondValue) }).toEqual({ step, second: [] });
      // Terraform does see the token: its id is in the state, for the other attributes.
      expect(s.state()).toContain(fx.emulator.tokens().find((t) => t.token === value)!.id);
    };
    await checkEverything("created");

    // A rename: the same token (same value), the consumers rerun with it.
    rmSync(s.files.direct);
    rmSync(s.files.viaModule);
    s.synth({ name: "eph-two", previousNames: ["eph-one"], description: "v1", valueInState: false, consumers: true });
    loginsBefore = logins();
    await s.run("apply", ["-auto-approve"]);
    // The plan-time read, the values' read at plan and again at apply (their id is known at plan), the
    // writer; no read after the writes (no token without an id at plan).
    expect(logins() - loginsBefore).toBe(4);
    expect(valueOf("eph-two")).toBe(value);
    await checkEverything("renamed");

    // A description change.
    rmSync(s.files.direct);
    rmSync(s.files.viaModule);
    s.synth({ name: "eph-two", previousNames: ["eph-one"], description: "v2", valueInState: false, consumers: true });
    await s.run("apply", ["-auto-approve"]);
    expect(fx.emulator.tokens().find((t) => t.name === "eph-two")!.description).toBe("v2");
    await checkEverything("described");

    // Destroy works with the ephemeral block in the configuration, and prints nothing of the value either.
    await s.run("destroy", ["-auto-approve"]);
    expect(leakedPieces(log, value)).toEqual([]);
  });

  test("valueInState true -> false removes the value from the state at the next apply, false -> true brings it back; no token write either way", async () => {
    const s = stackFolder("gpucloud-value-in-state-");
    s.synth({ name: "eph-switch" });
    await s.run("init");
    await s.run("apply", ["-auto-approve"]);
    const value = valueOf("eph-switch");
    expect(s.state()).toContain(value);

    const writes = fx.emulator.stats().tokenWrites;
    s.synth({ name: "eph-switch", valueInState: false });
    await s.run("apply", ["-auto-approve"]);
    expect(leakedPieces(s.state(), value)).toEqual([]);
    const planned = await s.tf.plan({ check: true, detailedExitCode: true });
    expect(planned.exitCode).toBe(0); // converged: nothing left to change

    s.synth({ name: "eph-switch", valueInState: true });
    await s.run("apply", ["-auto-approve"]);
    expect(s.state()).toContain(value);
    expect(fx.emulator.stats().tokenWrites).toBe(writes);
    expect(valueOf("eph-switch")).toBe(value);
  });

  test.each([
    // A null_resource's triggers are stored in the state: not a write-only argument.
    [
      "a resource's ordinary argument",
      (stack: TerraformStack, value: string) => void new Resource(stack, "copy", { triggers: { value } }),
      /Invalid use of ephemeral value.*not a write-only attribute and must be persisted to state/,
    ],
    // A stack is a root module: its outputs cannot be ephemeral.
    [
      "an output of the stack",
      (stack: TerraformStack, value: string) => void new TerraformOutput(stack, "leak", { value, sensitive: true }),
      /Ephemeral value not allowed/,
    ],
  ])("ephemeralToken in %s fails at plan with Terraform's own error", async (_label, misuse, message) => {
    const tf = await fx.stack(
      (stack) => misuse(stack, new ApiToken(stack, "token", { name: "eph-misuse", valueInState: false }).ephemeralToken),
      { prefix: "gpucloud-ephemeral-misuse-", context: CONTEXT },
    );
    const planned = await tf.plan();
    expect(planned.exitCode).toBe(1);
    expect(oneLine(planned.stderr)).toMatch(message);
    expect(existsSync(path.join(tf.dir, "terraform.tfstate"))).toBe(false);
  });
});
