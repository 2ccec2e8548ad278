/**
 * Runs the commands and programs of a synthesized cdk.tf.json the way Terraform does, without
 * Terraform: external programs directly (no shell) with the query JSON on stdin, local-exec
 * commands through `/bin/sh -c` with their `environment` added to the process environment,
 * both in the stack folder. This tests the scripts' side of each protocol; the real-Terraform
 * suites test the rest.
 */
import { encodeRunTicket } from "../../src/protocol";
import { randomHex } from "../../src/runtime/io/crypto";
import { type Ran, runProcess } from "./processes";

export type { Ran };

function run(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string }): Promise<Ran> {
  return runProcess(file, args, { ...opts, stdin: opts.stdin ?? "" });
}

/** `plantimestamp()` of every run of these commands: the run's id as hand-offs know it. */
const RUN = "2026-11-01T10:00:00Z";

/** Terraform's reading of a literal string: `$${` and `%%{` are escapes for `${` and `%{`. */
function unescapeTemplate(value: string): string {
  return value.replace(/\$\$\{/g, () => "${").replace(/%%\{/g, () => "%{");
}

/** A `data "external"` block: program, query (nulls dropped, as the provider does). */
export async function runExternal(
  stackDir: string,
  data: { program: string[]; query?: Record<string, string | null> },
  env: NodeJS.ProcessEnv,
  workspace = "default",
): Promise<Ran & { result?: Record<string, string> }> {
  // `terraform.workspace` as Terraform resolves it; everything else literal.
  const query = Object.fromEntries(
    Object.entries(data.query ?? {})
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, v === "${terraform.workspace}" ? workspace : unescapeTemplate(v as string)]),
  );
  const ran = await run(data.program[0], data.program.slice(1), { cwd: stackDir, env, stdin: JSON.stringify(query) });
  const result: Record<string, string> | undefined = ran.code === 0 ? JSON.parse(ran.stdout) : undefined;
  return { ...ran, result };
}

/**
 * A `local-exec` provisioner. `self` stands in for the resource's attributes, used to resolve
 * `${jsonencode(self.triggers)}`, `${self.triggers.x}` and `${lookup(self.triggers, "x", "")}` in a
 * provisioner's environment (`api_in_sync` reads "true", its value once applied); `workspace` is
 * `terraform.workspace` (default "default"); `planned` is the id the plan-time read found for the token.
 */
export function runLocalExec(
  stackDir: string,
  provisioner: { command: string; environment?: Record<string, string> },
  env: NodeJS.ProcessEnv,
  self?: { triggers: Record<string, string> },
  workspace = "default",
  planned?: string,
): Promise<Ran> {
  const trigger = (key: string, fallback?: string): string => {
    if (self && key in self.triggers) return unescapeTemplate(self.triggers[key].replace("${terraform.workspace}", workspace));
    if (fallback !== undefined) return fallback;
    throw new Error(`no self.triggers.${key} to resolve`);
  };
  // One run per call: its own ticket (no files shared with another call), the same plan time for hand-offs.
  const ticket = encodeRunTicket({ id: randomHex(16), planTime: RUN });
  const resolved = Object.fromEntries(
    Object.entries(provisioner.environment ?? {}).map(([k, v]) => {
      if (v === "${terraform.workspace}") return [k, workspace];
      if (v === "${jsonencode(self.triggers)}") {
        if (!self) throw new Error("no self.triggers to resolve");
        return [
          k,
          JSON.stringify(Object.fromEntries(Object.keys(self.triggers).map((t) => [t, t === "api_in_sync" ? "true" : trigger(t)]))),
        ];
      }
      const lookup = /^\$\{lookup\(self\.triggers, "([a-z_]+)", "([^"]*)"\)\}$/.exec(v);
      if (lookup) return [k, trigger(lookup[1], lookup[2])];
      const direct = /^\$\{self\.triggers\.([a-z_]+)\}$/.exec(v);
      if (direct) return [k, trigger(direct[1])];
      // The run's plan time and ticket, and the plan-time read's id of the token (GPUCLOUD_TOKEN_PLANNED): from
      // `planned`, else "" (as when the read found none).
      const resolvedPlan = v
        .replace(/\$\{plantimestamp\(\)\}/g, () => RUN)
        .replace(/\$\{local\.[\w-]+\["ticket"\]\}/g, () => ticket)
        .replace(/\$\{local\.[\w-]+\["t\d+\.id"\]\}/g, () => planned ?? "");
      return [k, unescapeTemplate(resolvedPlan)];
    }),
  );
  return run("/bin/sh", ["-c", provisioner.command], { cwd: stackDir, env: { ...env, ...resolved } });
}
