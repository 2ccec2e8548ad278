import { listAllTokens, type GpuCloudClient } from "../client";
import { ConfigError } from "./config";
import { withClient, type RuntimeContext } from "./context";
import { readHandoff, removeHandoff, writeHandoff } from "./handoff";
import { TokenEnv, type TokenAttributes, type TokenObservation, type TokenQuery } from "./protocol";

/** The fields of an API token this script relies on. */
interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
  readonly token: string;
  readonly created_at: number;
  readonly last_used?: number;
}

const NAME_LIMIT = 50;

/**
 * The token that a name designates. The API does not promise unique names; if several tokens
 * share one, the oldest is taken (a rule every command applies, so they all agree) and the
 * ambiguity is reported.
 */
export function pickByName(tokens: readonly TokenView[], name: string, warn?: (line: string) => void): TokenView | undefined {
  const matches = tokens
    .filter((t) => t.name === name)
    .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (matches.length > 1 && warn) {
    warn(
      `${matches.length} API tokens are named "${name}" (ids ${matches.map((t) => t.id).join(", ")}); ` +
        `using the oldest, ${matches[0].id}. Rename the others in the console to remove the ambiguity.`,
    );
  }
  return matches[0];
}

async function allTokens(client: GpuCloudClient, ctx: RuntimeContext): Promise<TokenView[]> {
  const tokens: TokenView[] = await listAllTokens(client);
  // Token values must never reach a log line, whatever a later message quotes.
  ctx.out.addSecrets(tokens.map((t) => t.token));
  return tokens;
}

/** Plan time: does the API hold a token that matches the configuration? */
export async function observeToken(ctx: RuntimeContext, query: TokenQuery): Promise<TokenObservation> {
  const name = requireName(query.name, "query.name");
  return withClient(ctx, query.base_url, async (client) => {
    const token = pickByName(await allTokens(client, ctx), name, ctx.out.warn);
    if (!token) return { in_sync: "false", reason: `no API token is named "${name}"`, id: "" };
    if (query.description !== undefined && (token.description ?? "") !== query.description) {
      return { in_sync: "false", reason: `the description of API token "${name}" differs`, id: token.id };
    }
    return { in_sync: "true", reason: "in sync", id: token.id };
  });
}

/** After the write (or at plan time when nothing changes): the token's attributes. */
export async function readToken(ctx: RuntimeContext, query: TokenQuery): Promise<TokenAttributes> {
  const name = requireName(query.name, "query.name");
  return withClient(ctx, query.base_url, async (client) => {
    const token = pickByName(await allTokens(client, ctx), name, ctx.out.warn);
    if (!token) {
      throw new Error(
        `no API token is named "${name}": it was removed or renamed outside Terraform after the plan started; ` +
          `run the plan again and apply it to recreate it`,
      );
    }
    return {
      id: token.id,
      name: token.name,
      description: token.description ?? "",
      token: token.token,
      created_at: String(token.created_at),
      last_used: String(token.last_used ?? 0),
    };
  });
}

/**
 * Creation-time provisioner: make the API hold exactly one token with the configured name and
 * description, writing only what differs. Precedence: the token handed over by the resource
 * this one replaces (a rename or update), else a token that already has the name (adoption),
 * else a new one.
 */
export async function applyToken(ctx: RuntimeContext): Promise<void> {
  const name = requireName(ctx.env[TokenEnv.NAME], TokenEnv.NAME);
  const description = ctx.env[TokenEnv.DESCRIPTION];
  const key = requireKey(ctx.env[TokenEnv.KEY]);
  const handoff = readHandoff(ctx.cwd, key, ctx.out.warn);

  await withClient(ctx, undefined, async (client) => {
    const tokens = await allTokens(client, ctx);
    const handedOver =
      (handoff?.id !== undefined ? tokens.find((t) => t.id === handoff.id) : undefined) ??
      (handoff ? pickByName(tokens, handoff.name) : undefined);
    const named = pickByName(tokens, name, ctx.out.warn);

    if (handedOver && named && named.id !== handedOver.id) {
      throw new Error(
        `cannot rename API token "${handedOver.name}" (id ${handedOver.id}) to "${name}": ` +
          `API token ${named.id} already has that name. Choose another name, or rename that token in the console. ` +
          `Nothing was changed.`,
      );
    }

    const target = handedOver ?? named;
    if (!target) {
      if (handoff) {
        ctx.out.info(`the API token "${handoff.name}" released by the replaced resource no longer exists; creating a new one`);
      }
      const created = await client.createToken({ name, description });
      ctx.out.addSecrets([created.token]);
      ctx.out.info(`created API token "${created.name}" (id ${created.id})`);
    } else {
      if (!handedOver) ctx.out.info(`adopted existing API token "${target.name}" (id ${target.id}) instead of creating another`);
      const changes: string[] = [];
      if (target.name !== name) changes.push(`renamed "${target.name}" to "${name}"`);
      if (description !== undefined && (target.description ?? "") !== description) changes.push("updated the description");
      if (changes.length === 0) {
        ctx.out.info(`API token "${name}" (id ${target.id}) is up to date; no change`);
      } else {
        // An unmanaged description is sent back as it is, whatever the server does with an omitted one.
        await client.updateToken(target.id, { name, description: description ?? target.description ?? undefined });
        ctx.out.info(`API token id ${target.id}: ${changes.join(", ")}`);
      }
    }
  });
  // Only once the API is in the wanted state: a failed run keeps the hand-off for the retry.
  // A stale or unreadable file goes too, since it was ignored.
  removeHandoff(ctx.cwd, key);
}

/**
 * Destroy-time provisioner. It cannot tell a destroy from the first half of a replacement, so it
 * does what is right for both: it leaves a hand-off for a replacement in this apply, and warns
 * that the token stays active otherwise. It never fails: a destroy must not be blocked by an
 * API that cannot be reached, since it changes nothing there.
 */
export async function releaseToken(ctx: RuntimeContext): Promise<void> {
  const name = ctx.env[TokenEnv.NAME] ?? "";
  const key = requireKey(ctx.env[TokenEnv.KEY]);
  let id: string | undefined;
  try {
    id = await withClient(ctx, undefined, async (client) => pickByName(await allTokens(client, ctx), name)?.id);
  } catch (err) {
    ctx.out.warn(`could not look up API token "${name}" while releasing it: ${ctx.out.redact(errorMessage(err))}`);
  }
  writeHandoff(ctx.cwd, key, { id, name, releasedAt: new Date().toISOString() });
  const which = id ? `API token "${name}" (id ${id})` : `API token "${name}"`;
  ctx.out.warn(
    `${which} is no longer managed by this resource and stays ACTIVE: the GPU cloud API has no delete operation. ` +
      `If this is part of a replacement (rename or description change), the new resource takes it over in this apply; ` +
      `if you are destroying it, revoke it in the cloud console.`,
  );
}

function requireName(value: string | undefined, field: string): string {
  if (value === undefined || value.length === 0) throw new ConfigError(`${field} is required (the API token's name)`);
  const length = [...value].length;
  if (length > NAME_LIMIT) {
    throw new ConfigError(`${field}: an API token's name is at most ${NAME_LIMIT} characters, got ${length}`);
  }
  return value;
}

function requireKey(value: string | undefined): string {
  if (!value) throw new ConfigError(`${TokenEnv.KEY} is required (set by the ApiToken construct)`);
  return value;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
