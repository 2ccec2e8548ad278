import { DEFAULT_ENV_PREFIX, foldTokenName, type RosterEntry, RosterEnv, type RosterNow } from "../../protocol";
import { ConfigError } from "../../shared/config";
import type { RuntimeContext } from "../../shared/context";

function parseJson(env: NodeJS.ProcessEnv, variable: string): unknown {
  const text = env[variable];
  if (text === undefined) throw new ConfigError(`${variable} is required (set by the stack's token roster)`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigError(`${variable} is not JSON (set by the stack's token roster)`);
  }
}

function rosterWas(env: NodeJS.ProcessEnv): Map<string, RosterEntry> {
  const was = parseJson(env, RosterEnv.WAS);
  const entries = new Map<string, RosterEntry>();
  // null: a roster whose input was never known (it cannot be, but a destroy must not fail on it).
  if (was === null) return entries;
  if (typeof was !== "object" || Array.isArray(was)) throw new ConfigError(`${RosterEnv.WAS} is not a JSON object`);
  for (const [path, value] of Object.entries(was as Record<string, unknown>)) {
    const entry = (value ?? {}) as Partial<Record<keyof RosterEntry, unknown>>;
    entries.set(path, {
      name: typeof entry.name === "string" ? entry.name : "",
      env_prefix: typeof entry.env_prefix === "string" && entry.env_prefix !== "" ? entry.env_prefix : undefined,
    });
  }
  return entries;
}

function rosterNow(env: NodeJS.ProcessEnv): RosterNow {
  const now = parseJson(env, RosterEnv.NOW) as Partial<RosterNow> | null;
  const strings = (list: unknown): string[] => (Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : []);
  return { paths: strings(now?.paths), names: strings(now?.names) };
}

/**
 * Destroy-time provisioner of the stack's token roster. Terraform runs it when the roster is
 * replaced (the set of ApiTokens changed), when its count drops to 0 (the last ApiToken is gone
 * while a lookup keeps the block), and when the stack is destroyed, but never for the block of a
 * removed resource: so this is where a removed token is reported at apply (the plan said it too, with
 * its id, from the state's ledger). It calls no API, so it never fails a destroy for an unreachable
 * API.
 */
export async function releaseRoster(ctx: RuntimeContext): Promise<void> {
  const was = rosterWas(ctx.env);
  const now = rosterNow(ctx.env);
  const samePaths = [...was.keys()].sort().join("\n") === [...now.paths].sort().join("\n");
  // The roster is replaced only when its paths change: with the same ones, it is being destroyed with the stack.
  const destroyingStack = samePaths && was.size > 0;
  const paths = new Set(now.paths);
  const names = new Set(now.names.map(foldTokenName));
  for (const [path, entry] of was) {
    // Still configured, or moved to another path under its name or a previous name (that ApiToken adopts or renames it).
    if (!destroyingStack && (paths.has(path) || (entry.name !== "" && names.has(foldTokenName(entry.name))))) continue;
    const which = `API token "${entry.name}"`;
    const account = ` on the account ${entry.env_prefix || DEFAULT_ENV_PREFIX}*`;
    const why = destroyingStack ? "the stack is being destroyed" : `the ApiToken "${path}" was removed from the stack`;
    ctx.out.warn(
      `${which}${account} stays ACTIVE: ${why}, and the GPU cloud API has no delete operation. ` +
        `Revoke it in the cloud console if nothing uses it; an ApiToken with the name "${entry.name}" would adopt it again.`,
    );
  }
}
