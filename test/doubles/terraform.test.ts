// Real Terraform against the provider doubles, with hand-written main.tf.json files.
// One doubles process serves the whole file; each scenario gets its own temp directory.
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

import {
  describeWithTerraform,
  ensureProviderDoublesBuilt,
  makeTempDir,
  oneLine,
  outputChanges,
  type ProviderDoubles,
  removeTempDirs,
  resourceActions,
  startProviderDoubles,
  stateResources,
  terraformBinary,
  TerraformRunner,
  writeTerraformJson,
} from "../support/terraform";

const PROVIDERS = {
  required_providers: {
    null: { source: "hashicorp/null", version: "~> 3.2" },
    external: { source: "hashicorp/external", version: "~> 2.3" },
  },
};

// Helper programs for the external data source, put on PATH for both Terraform and the doubles.
const PROGRAMS: Record<string, string> = {
  // Echoes what it was given: query (as received), argv, cwd and an environment variable.
  "tf-echo": `
    let input = "";
    process.stdin.on("data", (d) => (input += d)).on("end", () => {
      const q = JSON.parse(input);
      process.stdout.write(JSON.stringify({
        raw_query: input,
        greeting: "hello " + q.name,
        args: process.argv.slice(2).join(" "),
        cwd: process.cwd(),
        env: process.env.DOUBLES_TEST_VAR || "",
        // Set by go-plugin when Terraform starts a provider; programs inherit it.
        cookie: process.env.TF_PLUGIN_MAGIC_COOKIE || "",
      }));
    });`,
  "tf-fail": `
    process.stderr.write("boom: the flavor API is down\\n");
    process.exit(3);`,
  "tf-number": `process.stdout.write(JSON.stringify({ count: 1 }));`,
  "tf-null": `process.stdout.write("null");`,
  // Prints the content of the file named by its first argument (relative to its cwd).
  "tf-cat": `
    const fs = require("fs");
    process.stdout.write(JSON.stringify({ content: fs.readFileSync(process.argv[2], "utf8").trim() }));`,
  // Writes its pid to the file named by its first argument, then hangs.
  "tf-hang": `
    require("fs").writeFileSync(process.argv[2], String(process.pid));
    setInterval(() => {}, 1000);`,
};

function writePrograms(bin: string): void {
  mkdirSync(bin, { recursive: true });
  for (const [name, body] of Object.entries(PROGRAMS)) {
    const file = path.join(bin, name);
    writeFileSync(file, `#!${process.execPath}\n${body}\n`);
    chmodSync(file, 0o755);
  }
}

/** The terraform executable the harness runs, as an absolute path (searched on PATH if needed). */
function terraformExecutable(): string {
  const bin = terraformBinary();
  if (bin.includes("/")) return path.resolve(bin);
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.resolve(dir || ".", bin);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // try the next entry
    }
  }
  throw new Error(`${bin} not found on PATH`);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

describeWithTerraform("provider doubles under real Terraform", () => {
  let doubles: ProviderDoubles;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    const bin = path.join(makeTempDir("tf-doubles-bin-"), "bin");
    writePrograms(bin);
    env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`, DOUBLES_TEST_VAR: "from-the-environment" };
    doubles = await startProviderDoubles({ env });
  });

  afterAll(async () => {
    await doubles?.stop();
    removeTempDirs();
  });

  function stack(config: object): TerraformRunner {
    const dir = writeTerraformJson(makeTempDir("tf-doubles-stack-"), { terraform: PROVIDERS, ...config });
    return new TerraformRunner(dir, { doubles, env });
  }

  function readLines(file: string): string[] {
    return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : [];
  }

  describe("null_resource lifecycle with provisioners", () => {
    let tf: TerraformRunner;
    let events: string;
    const config = (v: string): object => ({
      resource: {
        null_resource: {
          x: {
            triggers: { v },
            provisioner: [
              { "local-exec": { command: 'echo "create ${self.triggers.v}" >> events.log' } },
              { "local-exec": { when: "destroy", command: 'echo "destroy ${self.triggers.v}" >> events.log' } },
            ],
          },
        },
      },
      output: { id: { value: "${null_resource.x.id}" } },
    });

    beforeAll(async () => {
      tf = stack(config("1"));
      events = path.join(tf.dir, "events.log");
      const init = await tf.init({ check: true });
      expect(init.stdout).toContain("Terraform has been successfully initialized");
    });

    it("plans and applies a create, running the creation provisioner", async () => {
      const { plan } = await tf.plan({ check: true });
      expect(resourceActions(plan!)).toEqual({ "null_resource.x": ["create"] });
      expect(outputChanges(plan!).id).toMatchObject({ actions: ["create"], after_unknown: true });

      await tf.apply({ check: true });
      const out = await tf.output();
      expect(out.id.value).toMatch(/^\d+$/);
      expect(readLines(events)).toEqual(["create 1"]);
    });

    it("has nothing to do on a second plan (exit code 0 with -detailed-exitcode)", async () => {
      const res = await tf.plan({ detailedExitCode: true });
      expect(res.exitCode).toBe(0);
      expect(res.stdout).toContain("No changes.");
      expect(resourceActions(res.plan!)).toEqual({ "null_resource.x": ["no-op"] });
    });

    it("replaces the resource when a trigger changes, rerunning both provisioners", async () => {
      const before = (await tf.output()).id.value;
      writeTerraformJson(tf.dir, { terraform: PROVIDERS, ...config("2") });
      const res = await tf.plan({ detailedExitCode: true, check: true });
      expect(res.exitCode).toBe(2);
      expect(resourceActions(res.plan!)).toEqual({ "null_resource.x": ["delete", "create"] });
      expect(res.plan!.resource_changes![0].change.replace_paths).toEqual([["triggers"]]);

      await tf.apply({ planFile: res.planFile, check: true });
      const after = (await tf.output()).id.value;
      expect(after).toMatch(/^\d+$/);
      expect(after).not.toBe(before);
      expect(readLines(events)).toEqual(["create 1", "destroy 1", "create 2"]);
    });

    it("refuses import like the real provider", async () => {
      const res = await tf.run("import", ["null_resource.x", "1234"]);
      expect(res.exitCode).toBe(1);
      expect(res.stderr).toContain("Error: Resource Import Not Implemented");
    });

    it("destroys, running the destroy provisioner", async () => {
      await tf.destroy({ check: true });
      expect(stateResources(await tf.show())).toEqual({});
      expect(readLines(events)).toEqual(["create 1", "destroy 1", "create 2", "destroy 2"]);
    });
  });

  describe("triggers unknown at plan time", () => {
    it("replaces when a trigger is unknown, then converges once the value is fixed", async () => {
      const config = (t: string): object => ({
        resource: { null_resource: { u: { triggers: { t } } } },
        output: { t: { value: "${null_resource.u.triggers.t}" } },
      });
      // timestamp() is only known at apply time, so this trigger is unknown in every plan.
      const unknownTrigger = '${timestamp() == "" ? "x" : "y"}';
      const tf = stack(config(unknownTrigger));
      await tf.init({ check: true });
      await tf.apply({ check: true });
      expect((await tf.output()).t.value).toBe("y");

      const res = await tf.plan({ detailedExitCode: true, check: true });
      expect(res.exitCode).toBe(2);
      expect(resourceActions(res.plan!)).toEqual({ "null_resource.u": ["delete", "create"] });
      expect(res.plan!.resource_changes![0].change.after_unknown).toMatchObject({ id: true, triggers: { t: true } });
      await tf.apply({ planFile: res.planFile, check: true });
      expect((await tf.output()).t.value).toBe("y");

      // Same value, now written as a constant: nothing left to do.
      writeTerraformJson(tf.dir, { terraform: PROVIDERS, ...config("y") });
      expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
    });

    it("plans an update when the whole triggers map becomes unknown over a null one, then fails the apply like the real provider", async () => {
      const config = (triggers: string | undefined): object => ({
        resource: { null_resource: { w: triggers ? { triggers } : {} } },
      });
      const tf = stack(config(undefined));
      await tf.init({ check: true });
      await tf.apply({ check: true });

      // The conditional is unknown until apply, so the map as a whole is unknown. The real plan
      // modifier sees no elements in it and nothing missing from the null prior map: an update.
      writeTerraformJson(tf.dir, { terraform: PROVIDERS, ...config('${timestamp() == "" ? tomap({}) : tomap({ a = "b" })}') });
      const res = await tf.plan({ detailedExitCode: true, check: true });
      expect(resourceActions(res.plan!)).toEqual({ "null_resource.w": ["update"] });
      // At apply the map is known and non-null over a null one, which the same modifier replaces:
      // Terraform rejects the changed action. (hashicorp/null 3.2.4 does exactly this.)
      const applied = await tf.apply({ planFile: res.planFile });
      expect(applied.exitCode).toBe(1);
      expect(oneLine(applied.stderr)).toContain("changed the planned action from Update to DeleteThenCreate");
    });

    it("replaces a resource whose trigger is another resource's id when that one is replaced", async () => {
      const config = (v: string): object => ({
        resource: {
          null_resource: {
            a: { triggers: { v } },
            b: { triggers: { upstream: "${null_resource.a.id}" } },
          },
        },
      });
      const tf = stack(config("1"));
      await tf.init({ check: true });
      await tf.apply({ check: true });
      writeTerraformJson(tf.dir, { terraform: PROVIDERS, ...config("2") });
      const { plan } = await tf.plan({ check: true });
      expect(resourceActions(plan!)).toEqual({ "null_resource.a": ["delete", "create"], "null_resource.b": ["delete", "create"] });
      await tf.apply({ check: true });
      const state = stateResources(await tf.show());
      expect(state["null_resource.b"].values.triggers).toEqual({ upstream: state["null_resource.a"].values.id });
    });
  });

  describe("external data source", () => {
    it("runs the program found on PATH with the query on stdin, in working_dir, with the environment", async () => {
      const tf = stack({
        data: {
          external: {
            echo: {
              program: ["tf-echo", "first arg", "second"],
              query: { name: "bob", dropped: null, a_first: "<&>" },
              working_dir: "${path.module}/sub",
            },
          },
        },
        output: {
          greeting: { value: "${data.external.echo.result.greeting}" },
          result: { value: "${data.external.echo.result}" },
          id: { value: "${data.external.echo.id}" },
        },
      });
      mkdirSync(path.join(tf.dir, "sub"));
      await tf.init({ check: true });

      const { plan } = await tf.plan({ check: true });
      // Nothing depends on managed resources, so the read happens during plan.
      expect(outputChanges(plan!).greeting).toMatchObject({ actions: ["create"], after: "hello bob" });

      await tf.apply({ check: true });
      const out = await tf.output();
      expect(out.greeting.value).toBe("hello bob");
      expect(out.id.value).toBe("-");
      expect(out.result.value).toEqual({
        // null query values are dropped; keys sorted and <, >, & escaped like Go's json.Marshal
        raw_query: '{"a_first":"\\u003c\\u0026\\u003e","name":"bob"}',
        greeting: "hello bob",
        args: "first arg second",
        cwd: path.join(tf.dir, "sub"),
        env: "from-the-environment",
        cookie: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
      });
    });

    it("resolves relative programs and paths against Terraform's working directory", async () => {
      const tf = stack({
        data: {
          external: {
            // Like a cdktf asset: a path relative to the stack folder.
            local: { program: ["./scripts/answer", "${path.module}/scripts/data.txt"] },
          },
        },
        output: { answer: { value: "${data.external.local.result.answer}" } },
      });
      mkdirSync(path.join(tf.dir, "scripts"));
      writeFileSync(path.join(tf.dir, "scripts", "data.txt"), "42\n");
      const script = path.join(tf.dir, "scripts", "answer");
      writeFileSync(
        script,
        `#!${process.execPath}\nprocess.stdout.write(JSON.stringify({ answer: require("fs").readFileSync(process.argv[2], "utf8").trim() }));\n`,
      );
      chmodSync(script, 0o755);
      await tf.init({ check: true });
      await tf.apply({ check: true });
      expect((await tf.output()).answer.value).toBe("42");
    });

    it("fails the plan with the program's stderr when it exits non-zero", async () => {
      const tf = stack({ data: { external: { broken: { program: ["tf-fail"] } } } });
      await tf.init({ check: true });
      const res = await tf.plan();
      expect(res.exitCode).toBe(1);
      expect(res.stderr).toContain("Error: External Program Execution Failed");
      expect(res.stderr).toContain("boom: the flavor API is down");
      expect(res.stderr).toContain("State: exit status 3");
      expect(res.plan).toBeUndefined();
    });

    it("stores a null result when the program prints null, as json.Unmarshal and the framework do", async () => {
      const tf = stack({
        data: { external: { nothing: { program: ["tf-null"] } } },
        output: { is_null: { value: "${data.external.nothing.result == null}" } },
      });
      await tf.init({ check: true });
      await tf.apply({ check: true });
      expect((await tf.output()).is_null.value).toBe(true);
    });

    it("rejects output that is not a JSON object of strings with the real provider's message", async () => {
      const tf = stack({ data: { external: { numbers: { program: ["tf-number"] } } } });
      await tf.init({ check: true });
      const res = await tf.plan();
      expect(res.exitCode).toBe(1);
      expect(res.stderr).toContain("Error: Unexpected External Program Results");
      expect(oneLine(res.stderr)).toContain("Program output must be a JSON encoded map of string keys and string values.");
      expect(oneLine(res.stderr)).toContain("Result Error: json: cannot unmarshal number");
    });

    it("reports a program that cannot be found", async () => {
      const tf = stack({ data: { external: { missing: { program: ["./no-such-program"] } } } });
      await tf.init({ check: true });
      const res = await tf.plan();
      expect(res.exitCode).toBe(1);
      expect(res.stderr).toContain("Error: External Program Lookup Failed");
      expect(oneLine(res.stderr)).toContain('Error: exec: "./no-such-program": stat ./no-such-program: no such file or directory');
    });

    it("fails like the real provider when node is not on Terraform's PATH, even where a login shell would find it", async () => {
      // Terraform's PATH holds terraform only. $SHELL is bash and its rc files put node's folder
      // on PATH, as nvm does: a double that ran programs through `$SHELL -i -c` would succeed.
      const base = makeTempDir("tf-doubles-nonode-");
      const tfBin = path.join(base, "bin");
      mkdirSync(tfBin);
      symlinkSync(terraformExecutable(), path.join(tfBin, "terraform"));
      const home = path.join(base, "home");
      mkdirSync(home);
      const addNode = `export PATH="${path.dirname(process.execPath)}:$PATH"\n`;
      for (const rc of [".bashrc", ".bash_profile", ".profile"]) writeFileSync(path.join(home, rc), addNode);
      const shell = ["/bin/bash", "/usr/bin/bash"].find((s) => existsSync(s)) ?? "/bin/sh";
      const noNodeEnv = { ...env, PATH: tfBin, HOME: home, SHELL: shell, ENV: path.join(home, ".profile") };

      // Shell-safe words, so that the old `$SHELL -i -c "<program joined by spaces>"` would run it.
      const dir = writeTerraformJson(
        makeTempDir("tf-doubles-stack-"),
        { terraform: PROVIDERS, data: { external: { runtime: { program: ["node", "./print-empty.js"] } } } },
        { "print-empty.js": "process.stdout.write('{}');\n" },
      );
      const tf = new TerraformRunner(dir, { doubles, env: noNodeEnv });
      await tf.init({ check: true });
      const res = await tf.plan();
      expect(res.exitCode).toBe(1);
      expect(res.stderr).toContain("Error: External Program Lookup Failed");
      expect(oneLine(res.stderr)).toContain('Program: "node" Error: exec: "node": executable file not found in $PATH');
      expect(res.plan).toBeUndefined();
    });

    it("defers the read to apply when it depends on a resource with pending changes", async () => {
      const tf = stack({
        resource: {
          null_resource: {
            gate: { provisioner: [{ "local-exec": { command: "echo written-by-the-gate > gate.txt" } }] },
          },
        },
        data: {
          external: {
            after: { program: ["tf-cat", "gate.txt"], working_dir: "${path.module}", depends_on: ["null_resource.gate"] },
          },
        },
        output: { content: { value: "${data.external.after.result.content}" } },
      });
      await tf.init({ check: true });

      const { plan, planFile } = await tf.plan({ check: true });
      expect(resourceActions(plan!)).toEqual({ "null_resource.gate": ["create"], "data.external.after": ["read"] });
      const read = plan!.resource_changes!.find((rc) => rc.address === "data.external.after")!;
      expect(read.action_reason).toBe("read_because_dependency_pending");
      expect(outputChanges(plan!).content).toMatchObject({ after_unknown: true });

      // The program reads the file the gate's provisioner writes: it only works if it runs after.
      await tf.apply({ planFile, check: true });
      expect((await tf.output()).content.value).toBe("written-by-the-gate");
      expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);
    });

    it("kills the program when Terraform is interrupted", async () => {
      const tf = stack({ data: { external: { slow: { program: ["tf-hang", "${path.module}/hang.pid"] } } } });
      await tf.init({ check: true });
      const pidFile = path.join(tf.dir, "hang.pid");
      // A short command timeout: if the double failed to kill the program, plan would hang.
      const { child, result } = await tf.start("plan", [], { timeoutMs: 15_000 });
      expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "", 10_000)).toBe(true);
      const programPid = Number(readFileSync(pidFile, "utf8"));
      try {
        expect(pidAlive(programPid)).toBe(true);
        child.kill("SIGINT"); // Terraform answers with Stop to its providers
        const res = await result;
        expect(res.timedOut).toBe(false);
        expect(res.exitCode).toBe(1);
        expect(res.stdout).toContain("Interrupt received");
        // Like cmd.Wait: the killed process's own status, not the context's error.
        expect(oneLine(res.stderr)).toContain("State: signal: killed");
        expect(await waitFor(() => !pidAlive(programPid), 5_000)).toBe(true);
      } finally {
        if (pidAlive(programPid)) process.kill(programPid, "SIGKILL"); // never leak it
      }
    });
  });
});
