import path from "node:path";

import { accountEnv, DEFAULT_ENV_PREFIX } from "../../protocol";
import { accountDigestIn, accountRefIn } from "../account-identity";
import type { TokenView } from "../names/token-list";
import { type AppliedRecord, appliedRecordPath } from "./applied-record";

/*
 * What the plan-time read learns from this folder's applied records beyond the token a name
 * designates: that the credentials now reach another account than the last apply's, and that
 * another workspace of the folder manages the same token. Digests (node:crypto) are computed only
 * when a record calls for a comparison, so a plan usually loads none (see ../io/sha256.ts).
 */

/** The account a group of the read works on: its variable prefix and construct base URL. */
export interface ReadAccount {
  readonly env: NodeJS.ProcessEnv;
  readonly envPrefix?: string;
  readonly baseUrl?: string;
}

/**
 * The error when the last apply from this folder managed `record`'s token as another identity
 * on the same API address, and the current credentials do not list it: they reach another
 * account, and the plan would quietly move the stack's token there. Undefined otherwise (the
 * token is listed, so the account is the same whoever logs in; or the record knows no identity).
 */
export function accountSwitchError(
  cwd: string,
  record: AppliedRecord | undefined,
  listed: readonly TokenView[],
  account: ReadAccount,
): string | undefined {
  if (record?.identity === undefined || listed.some((t) => t.id === record.id)) return undefined;
  if (record.api !== accountDigestIn(account.env, account.envPrefix, account.baseUrl)) return undefined;
  const now = accountRefIn(account.env, account.envPrefix, account.baseUrl).identity;
  if (now === record.identity) return undefined;
  const names = accountEnv(account.envPrefix ?? DEFAULT_ENV_PREFIX);
  const file = path.relative(cwd, appliedRecordPath(cwd, record.workspace, record.key));
  return (
    `the last apply from this folder (workspace "${record.workspace}") managed API token "${record.name}" ` +
    `(id ${record.id}) as ${record.identity}, but the credentials now log in as ${now}, which does not list that token: ` +
    `another account. Nothing was planned. If these are the wrong credentials, set ${names.API_TOKEN}, or ${names.USERNAME} ` +
    `with its password, to those of the account the stack manages. To move the stack to this account on purpose, delete ` +
    `${file} and plan again: a token of this name is then created or adopted here, and token ${record.id} stays ACTIVE on the other account.`
  );
}

/**
 * The warning when `token`, which this workspace's `name` designates, is the token another
 * workspace of this folder last applied on the same API: two workspaces manage one token, and a
 * rename or description change in either changes it for both.
 */
export function sharedWithWorkspacesWarning(
  name: string,
  token: { readonly id: string } | undefined,
  otherWorkspaces: readonly AppliedRecord[],
  account: ReadAccount,
): string | undefined {
  if (token === undefined || token.id === "") return undefined;
  const same = otherWorkspaces.filter((r) => r.id === token.id);
  if (same.length === 0) return undefined;
  const api = accountDigestIn(account.env, account.envPrefix, account.baseUrl);
  const workspaces = [...new Set(same.filter((r) => r.api === api).map((r) => `"${r.workspace}"`))];
  if (workspaces.length === 0) return undefined;
  return (
    `API token "${name}" (id ${token.id}) is also the token workspace ${workspaces.join(", ")} of this folder last applied: ` +
    `two workspaces manage one token, and a rename or description change in either changes it for both. ` +
    `Give each workspace its own name, e.g. with terraform.workspace in it (docs/accounts.md, "Workspaces").`
  );
}
