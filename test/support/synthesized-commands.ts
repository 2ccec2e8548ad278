/**
 * Runs the commands and programs of a synthesized cdk.tf.json the way Terraform does, without
 * Terraform: external programs directly (no shell) with the query JSON on stdin, local-exec
 * commands through `/bin/sh -c` with their `environment` added to the process environment,
 * both in the stack folder. This tests the scripts' side of each protocol; the real-Terraform
 * suites test the rest.
 */
import { type Ran, runProcess } from "./processes";

export type { Ran };

function run(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string }): Promise<Ran> {
  return runProcess(file, args, { ...opts, stdin: opts.stdin ?? "" });
}

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
