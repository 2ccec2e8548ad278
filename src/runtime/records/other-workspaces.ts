import { accountDigestIn } from "../account-identity";
import type { AppliedRecord } from "./applied-record";

/** The account a group of the stack read works on: its variable prefix and construct base URL. */
export interface ReadAccount {
  readonly env: NodeJS.ProcessEnv;
  readonly envPrefix?: string;
  readonly baseUrl?: string;
}

/**
 * The warning when `token`, which this workspace's `name` designates, is the token another
 * workspace of this folder last applied on the same API (this folder's records): two workspaces
 * manage one token, and a rename or description change in either changes it for both.
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
