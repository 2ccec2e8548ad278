// The built doubles process spoken to directly over gRPC, as Terraform would (no terraform
// binary needed, so this also runs where Terraform is missing).
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

import * as grpc from "@grpc/grpc-js";
import { encode, ExtData } from "@msgpack/msgpack";

import { decodeMsgpack, Unknown } from "../../tools/provider-doubles/cty";
import { loadServices } from "../../tools/provider-doubles/protocol";
import { ensureProviderDoublesBuilt, makeTempDir, type ProviderDoubles, removeTempDirs, startProviderDoubles } from "../support/terraform";

type Reattach = Record<string, { Pid: number; Test: boolean; ProtocolVersion: number; Addr: { Network: string; String: string } }>;
const NULL = "registry.terraform.io/hashicorp/null";
const EXTERNAL = "registry.terraform.io/hashicorp/external";
const LOCAL = "registry.terraform.io/hashicorp/local";

/** A promisified unary client for one service on one socket. */
function client(socket: string, which: "provider" | "health") {
  const Ctor = grpc.makeGenericClientConstructor(loadServices()[which], which);
  const c = new Ctor(`unix://${socket}`, grpc.credentials.createInsecure());
  const call = <Res>(method: string, req: object): Promise<Res> =>
    new Promise((resolve, reject) => {
      const fn = (c as unknown as Record<string, (r: object, cb: (e: grpc.ServiceError | null, res: Res) => void) => void>)[method];
      fn.call(c, req, (e, res) => (e ? reject(e) : resolve(res)));
    });
  return { call, close: () => c.close() };
}

interface Diag {
  severity: string;
  summary: string;
  detail: string;
  attribute: { steps: { attribute_name?: string }[] } | null;
}

describe("provider doubles over gRPC", () => {
  let doubles: ProviderDoubles;
  let reattach: Reattach;
  const clients: { close(): void }[] = [];
  const open = (socket: string, which: "provider" | "health") => {
    const c = client(socket, which);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    ensureProviderDoublesBuilt();
    doubles = await startProviderDoubles();
    reattach = JSON.parse(doubles.reattach) as Reattach;
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await doubles?.stop();
    removeTempDirs();
  });

  it("prints a reattach map for the three providers, in this process, over unix sockets", () => {
    expect(Object.keys(reattach).sort()).toEqual([EXTERNAL, LOCAL, NULL]);
    for (const entry of Object.values(reattach)) {
      expect(entry).toMatchObject({ Protocol: "grpc", ProtocolVersion: 5, Pid: doubles.pid, Test: true, Addr: { Network: "unix" } });
      expect(existsSync(entry.Addr.String)).toBe(true);
    }
    expect(reattach[NULL].Addr.String).not.toBe(reattach[EXTERNAL].Addr.String);
  });

  it("answers the health check for the plugin service", async () => {
    const health = open(reattach[NULL].Addr.String, "health");
    await expect(health.call("Check", { service: "plugin" })).resolves.toEqual({ status: "SERVING" });
    await expect(health.call("Check", { service: "other" })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("describes the null_resource schema with JSON cty types", async () => {
    const p = open(reattach[NULL].Addr.String, "provider");
    const res = await p.call<{
      resource_schemas: Record<string, { block: { attributes: { name: string; type: Buffer; optional: boolean; computed: boolean }[] } }>;
      data_source_schemas: Record<string, unknown>;
      server_capabilities: { plan_destroy: boolean };
    }>("GetSchema", {});
    const attrs = res.resource_schemas.null_resource.block.attributes;
    const byName = Object.fromEntries(
      attrs.map((a) => [a.name, { type: JSON.parse(a.type.toString()), optional: a.optional, computed: a.computed }]),
    );
    expect(byName).toEqual({
      triggers: { type: ["map", "string"], optional: true, computed: false },
      id: { type: "string", optional: false, computed: true },
    });
    expect(res.data_source_schemas).toEqual({});
    expect(res.server_capabilities.plan_destroy).toBe(true);
  });

  it("plans a replacement when a trigger is a refined unknown", async () => {
    const p = open(reattach[NULL].Addr.String, "provider");
    const prior = { id: "7", triggers: { t: "old" } };
    // What Terraform sends for an unknown string known to be non-null: extension 12.
    const proposed = { id: "7", triggers: { t: new ExtData(12, encode(new Map([[1, true]]))) } };
    const res = await p.call<{ planned_state: { msgpack: Buffer }; requires_replace: unknown[]; diagnostics: Diag[] }>(
      "PlanResourceChange",
      {
        type_name: "null_resource",
        prior_state: { msgpack: encode(prior) },
        proposed_new_state: { msgpack: encode(proposed) },
        config: { msgpack: encode({ id: null, triggers: proposed.triggers }) },
      },
    );
    expect(res.diagnostics).toEqual([]);
    expect(res.requires_replace).toEqual([{ steps: [{ attribute_name: "triggers", selector: "attribute_name" }] }]);
    expect(decodeMsgpack(res.planned_state.msgpack)).toEqual({ id: Unknown, triggers: { t: Unknown } });
  });

  it("upgrades JSON state to schema-shaped msgpack", async () => {
    const p = open(reattach[NULL].Addr.String, "provider");
    const res = await p.call<{ upgraded_state: { msgpack: Buffer }; diagnostics: Diag[] }>("UpgradeResourceState", {
      type_name: "null_resource",
      version: 0,
      raw_state: { json: Buffer.from('{"id":"99"}') },
    });
    expect(res.diagnostics).toEqual([]);
    expect(decodeMsgpack(res.upgraded_state.msgpack)).toEqual({ id: "99", triggers: null });
  });

  it("refuses import with the framework's diagnostic", async () => {
    const p = open(reattach[NULL].Addr.String, "provider");
    const res = await p.call<{ imported_resources: unknown[]; diagnostics: Diag[] }>("ImportResourceState", {
      type_name: "null_resource",
      id: "x",
    });
    expect(res.imported_resources).toEqual([]);
    expect(res.diagnostics).toMatchObject([{ severity: "ERROR", summary: "Resource Import Not Implemented" }]);
  });

  it("answers GetMetadata", async () => {
    const p = open(reattach[EXTERNAL].Addr.String, "provider");
    const res = await p.call<{ data_sources: { type_name: string }[]; resources: unknown[] }>("GetMetadata", {});
    expect(res).toMatchObject({ data_sources: [{ type_name: "external" }], resources: [] });
  });

  it("runs external programs in a session's directory, with its environment", async () => {
    const dir = makeTempDir("tf-doubles-session-");
    const session = JSON.parse(await doubles.session({ cwd: dir, env: { ...process.env, SESSION_VAR: "s1" } })) as Reattach;
    expect(session[EXTERNAL].Addr.String).not.toBe(reattach[EXTERNAL].Addr.String);
    const p = open(session[EXTERNAL].Addr.String, "provider");
    const script = "process.stdout.write(JSON.stringify({ cwd: process.cwd(), v: process.env.SESSION_VAR }))";
    const res = await p.call<{ state: { msgpack: Buffer }; diagnostics: Diag[] }>("ReadDataSource", {
      type_name: "external",
      config: {
        msgpack: encode({
          program: [process.execPath, "-e", script],
          query: null,
          working_dir: null,
          result: new ExtData(0, new Uint8Array([0])),
          id: new ExtData(0, new Uint8Array([0])),
        }),
      },
    });
    expect(res.diagnostics).toEqual([]);
    expect(decodeMsgpack(res.state.msgpack)).toEqual({
      program: [process.execPath, "-e", script],
      query: null,
      working_dir: null,
      result: { cwd: dir, v: "s1" },
      id: "-",
    });
  });

  describe("hashicorp/local's ephemeral local_command (v2.7.0's ephemeral_local_command.go)", () => {
    const U = new ExtData(0, new Uint8Array([0]));
    /** A config as Terraform sends it: every attribute present, computed ones unknown... or null. */
    const config = (over: Record<string, unknown>) => ({
      command: null,
      arguments: null,
      stdin: null,
      working_directory: null,
      allow_non_zero_exit_code: null,
      exit_code: null,
      stdout: null,
      stderr: null,
      ...over,
    });
    let dir: string;
    let p: ReturnType<typeof client>;
    beforeAll(async () => {
      dir = makeTempDir("tf-doubles-local-");
      const session = JSON.parse(
        await doubles.session({ cwd: dir, env: { ...process.env, LOCAL_SECRET: "from-terraform-env" } }),
      ) as Reattach;
      p = open(session[LOCAL].Addr.String, "provider");
    });
    const openCommand = (cfg: Record<string, unknown>) =>
      p.call<{ result: { msgpack: Buffer }; diagnostics: Diag[]; renew_at: unknown; private: unknown }>("OpenEphemeralResource", {
        type_name: "local_command",
        config: { msgpack: encode(config(cfg)) },
      });

    it("describes the schema: nothing sensitive, exit_code a number, no resources or data sources", async () => {
      const res = await p.call<{
        ephemeral_resource_schemas: Record<
          string,
          {
            block: {
              attributes: { name: string; type: Buffer; required: boolean; optional: boolean; computed: boolean; sensitive: boolean }[];
            };
          }
        >;
        resource_schemas: Record<string, unknown>;
        data_source_schemas: Record<string, unknown>;
      }>("GetSchema", {});
      const attrs = res.ephemeral_resource_schemas.local_command.block.attributes;
      const byName = Object.fromEntries(
        attrs.map((a) => [
          a.name,
          [JSON.parse(a.type.toString()), a.required ? "required" : a.optional ? "optional" : "computed", a.sensitive],
        ]),
      );
      expect(byName).toEqual({
        command: ["string", "required", false],
        arguments: [["list", "string"], "optional", false],
        stdin: ["string", "optional", false],
        working_directory: ["string", "optional", false],
        allow_non_zero_exit_code: ["bool", "optional", false],
        exit_code: ["number", "computed", false],
        stdout: ["string", "computed", false],
        stderr: ["string", "computed", false],
      });
      expect(res.resource_schemas).toEqual({});
      expect(res.data_source_schemas).toEqual({});
      await expect(p.call("GetMetadata", {})).resolves.toMatchObject({ ephemeral_resources: [{ type_name: "local_command" }] });
      await expect(
        p.call("ValidateEphemeralResourceConfig", {
          type_name: "local_command",
          config: { msgpack: encode(config({ command: "x", exit_code: U })) },
        }),
      ).resolves.toEqual({ diagnostics: [] });
    });

    it("runs the command on PATH in Terraform's directory with Terraform's whole environment, stdin given; null arguments dropped", async () => {
      const script =
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>process.stdout.write(JSON.stringify({cwd:process.cwd(),v:process.env.LOCAL_SECRET,s,a:process.argv.slice(1)})))";
      const res = await openCommand({ command: "node", arguments: ["-e", script, null, "x"], stdin: "in put" });
      expect(res.diagnostics).toEqual([]);
      // No renewal and no private data: Terraform never calls Renew.
      expect(res.renew_at ?? null).toBeNull();
      expect(res.private ?? null).toBeNull();
      const result = decodeMsgpack(res.result.msgpack) as Record<string, unknown>;
      expect(JSON.parse(result.stdout as string)).toEqual({ cwd: dir, v: "from-terraform-env", s: "in put", a: ["x"] });
      expect(result).toMatchObject({ command: "node", arguments: ["-e", script, null, "x"], stdin: "in put", exit_code: 0, stderr: null });
    });

    it("empty output is null; a non-zero exit is an error with stderr, or a result with allow_non_zero_exit_code", async () => {
      const silent = decodeMsgpack((await openCommand({ command: "node", arguments: ["-e", ""] })).result.msgpack);
      expect(silent).toMatchObject({ stdout: null, stderr: null, exit_code: 0 });

      const failing = ["-e", "process.stderr.write('bad thing');process.exit(3)"];
      const failed = await openCommand({ command: "node", arguments: failing });
      expect(failed.diagnostics).toHaveLength(1);
      expect(failed.diagnostics[0]).toMatchObject({
        severity: "ERROR",
        summary: "Command Execution Failed",
        attribute: { steps: [{ attribute_name: "command" }] },
      });
      expect(failed.diagnostics[0].detail).toMatch(
        /^The ephemeral resource executed the command but received a non-zero exit code\. If a non-zero exit code is expected and can be handled in configuration, set "allow_non_zero_exit_code" to true\.\n\nCommand: \/\S*node -e process\.stderr/,
      );
      expect(failed.diagnostics[0].detail).toMatch(/\nCommand Error: bad thing\nState: exit status 3$/);

      const allowed = await openCommand({ command: "node", arguments: failing, allow_non_zero_exit_code: true });
      expect(allowed.diagnostics).toEqual([]);
      expect(decodeMsgpack(allowed.result.msgpack)).toMatchObject({ exit_code: 3, stderr: "bad thing", stdout: null });
    });

    it("a command not found, or found only through a relative PATH entry (Go's ErrDot), fails the lookup", async () => {
      const missing = await openCommand({ command: "no-such-command-i16" });
      expect(missing.diagnostics[0]).toMatchObject({ summary: "Command Lookup Failed" });
      expect(missing.diagnostics[0].detail).toMatch(
        /\n\nPlatform: linux\nCommand: no-such-command-i16\nError: exec: "no-such-command-i16": executable file not found in \$PATH$/,
      );

      const bin = path.join(dir, "bin");
      mkdirSync(bin, { recursive: true });
      writeFileSync(path.join(bin, "dot-tool"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
      const session = JSON.parse(await doubles.session({ cwd: dir, env: { ...process.env, PATH: `bin:${process.env.PATH}` } })) as Reattach;
      const q = open(session[LOCAL].Addr.String, "provider");
      const dot = await q.call<{ diagnostics: Diag[] }>("OpenEphemeralResource", {
        type_name: "local_command",
        config: { msgpack: encode(config({ command: "dot-tool" })) },
      });
      expect(dot.diagnostics[0].detail).toMatch(/\nError: exec: "dot-tool": cannot run executable found relative to current directory$/);
    });

    it("a working_directory that does not exist fails to start (no exit code)", async () => {
      const res = await openCommand({ command: "node", arguments: ["-e", ""], working_directory: "nope" });
      expect(res.diagnostics[0]).toMatchObject({ summary: "Command Execution Failed" });
      expect(res.diagnostics[0].detail).toMatch(
        /^The ephemeral resource received an unexpected error while attempting to execute the command\.\n\nCommand: \S*node -e \nState: chdir nope: no such file or directory$/,
      );
      expect(decodeMsgpack(res.result.msgpack)).toMatchObject({ exit_code: null });
    });

    it("Close succeeds and Renew is refused, as plugin-framework answers a resource without them", async () => {
      await expect(p.call("CloseEphemeralResource", { type_name: "local_command" })).resolves.toEqual({ diagnostics: [] });
      const renewed = await p.call<{ diagnostics: Diag[] }>("RenewEphemeralResource", { type_name: "local_command" });
      expect(renewed.diagnostics).toMatchObject([{ severity: "ERROR", summary: "Ephemeral Resource Renew Not Implemented" }]);
    });
  });

  it("reports a session for a missing directory as an error", async () => {
    await expect(doubles.session({ cwd: path.join(makeTempDir(), "nope") })).rejects.toThrow(/refused the session/);
  });

  it("removes its sockets when stopped", async () => {
    const other = await startProviderDoubles();
    const sockets = Object.values(JSON.parse(other.reattach) as Reattach).map((e) => e.Addr.String);
    expect(sockets.every((s) => existsSync(s))).toBe(true);
    await other.stop();
    expect(sockets.some((s) => existsSync(s))).toBe(false);
    expect(existsSync(path.dirname(sockets[0]))).toBe(false);
  });
});
