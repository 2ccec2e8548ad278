import {
  accountEnv,
  DEFAULT_ENV_PREFIX,
  foldTokenName,
  type LedgerAccount,
  type LedgerToken,
  parseAllowedIdentity,
  type RunTicket,
  sameLedgerAccount,
} from "../../protocol";
import { accountFingerprint, apiAddress } from "../account-identity";
import type { TokenIndex } from "../names/token-index";
import type { LastManaged, ManagedToken } from "./stack-query";

/*
 * What the plan-time read checks of the account its credentials reach, against what the last apply
 * managed (the state's ledger, else this folder's records) and the account's pin: the account a
 * stack manages never switches without a failed plan, and a removed ApiToken is said in the plan.
 */

/** An account as messages name it: `user alice at https://api.example.com`. */
function accountLabel(account: LedgerAccount): string {
  return `${account.identity} at ${account.api}`;
}

/** Whether a variable set on purpose (MOVE_TO, UNCHECKED_ACCOUNT) names this account as plans print it. */
function namesThisAccount(env: NodeJS.ProcessEnv, variable: string, current: LedgerAccount): boolean {
  return (env[variable] ?? "").trim() === accountLabel(current);
}

/** Whether an allowedIdentities entry names this account: its identity at its API address. */
function pinAllows(entry: string, current: LedgerAccount): boolean {
  const pinned = parseAllowedIdentity(entry);
  return pinned !== undefined && pinned.identity === current.identity && apiAddress(pinned.api) === current.api;
}

/** The error when the credentials of an account log in as an identity, or at an address, its GpuCloudAccount does not pin. */
export function pinError(tokens: readonly ManagedToken[], current: LedgerAccount): string | undefined {
  const pinned = tokens.find((m) => m.allowedIdentities !== undefined);
  if (pinned?.allowedIdentities === undefined || pinned.allowedIdentities.some((entry) => pinAllows(entry, current))) return undefined;
  const names = accountEnv(current.prefix);
  return (
    `the credentials of account ${current.prefix}* log in as ${accountLabel(current)}, which its GpuCloudAccount does not allow ` +
    `(allowedIdentities: ${pinned.allowedIdentities.join(", ")}). Nothing was planned. Set ${names.API_TOKEN}, or ${names.USERNAME} ` +
    `with its password, and ${names.BASE_URL} or the account's baseUrl, to those of an allowed identity, or add ` +
    `"${accountLabel(current)}" to allowedIdentities.`
  );
}

/**
 * Whether `listed` (the account the credentials reach) holds the token the last apply managed: by id
 * at the same API address; at another address by id and name, since two deployments of the service
 * may number their tokens alike.
 */
function listsIt(listed: TokenIndex, last: LastManaged & { account: LedgerAccount }, current: LedgerAccount): boolean {
  const t = listed.byId(last.id);
  return t !== undefined && (last.account.api === current.api || foldTokenName(t.name) === foldTokenName(last.name));
}

/** What the plan says about the account its credentials reach: a refusal, or the warning of a move on purpose. */
export interface AccountSwitch {
  readonly refusal?: string;
  readonly moving?: string;
}

/**
 * When the last apply managed these tokens on another identity or API address and the credentials
 * now list none of them: another account, or tokens revoked, which this plan cannot tell apart, so
 * it says both and refuses, unless <prefix>MOVE_TO names this account (then it warns that the old
 * tokens stay active). Another credential or address of the same account lists them: nothing.
 */
export function accountSwitch(
  managed: ReadonlyArray<{ readonly m: ManagedToken; readonly last: LastManaged | undefined }>,
  listed: TokenIndex,
  current: LedgerAccount,
  opts: { readonly env: NodeJS.ProcessEnv; readonly workspace: string },
): AccountSwitch {
  const before = managed.filter(
    (e): e is { m: ManagedToken; last: LastManaged & { account: LedgerAccount } } =>
      e.last?.account !== undefined && e.last.id !== "" && e.last.account.prefix === current.prefix,
  );
  const moved = before.filter(({ last }) => !sameLedgerAccount(last.account, current));
  if (moved.length === 0 || before.some(({ last }) => listsIt(listed, last, current))) return {};
  const names = accountEnv(current.prefix);
  const was = [...new Set(moved.map(({ last }) => accountLabel(last.account)))].join(" and ");
  const tokens = moved.map(({ last }) => `"${last.name}" (id ${last.id})`).join(", ");
  if (namesThisAccount(opts.env, names.MOVE_TO, current)) {
    return {
      moving:
        `${names.MOVE_TO} moves the stack's API tokens of account ${current.prefix}* to ${accountLabel(current)}: tokens of their ` +
        `names are created or adopted here, and those the last apply managed as ${was} stay ACTIVE there: ${tokens}. ` +
        `Revoke them there if nothing uses them; remove ${names.MOVE_TO} once this is applied.`,
    };
  }
  return {
    refusal:
      `the credentials of account ${current.prefix}* log in as ${accountLabel(current)}, but the last apply of this stack ` +
      `(workspace "${opts.workspace}") managed its API tokens as ${was}, and these credentials list none of them: ${tokens}. ` +
      `They reach another account, or those tokens were revoked. Nothing was planned. If these are the wrong credentials, set ` +
      `${names.API_TOKEN} (or ${names.USERNAME} with its password), and ${names.BASE_URL} or the account's baseUrl, to those ` +
      `of the account the stack manages. To manage the stack's tokens on this account from now on, plan and apply once with ` +
      `${names.MOVE_TO}="${accountLabel(current)}": tokens of these names are then created or adopted here, and the ones above ` +
      `stay ACTIVE where they are.`,
  };
}

/**
 * A warning for each token the last apply managed whose ApiToken is no longer configured on its
 * account (under neither its path, nor its name or a previous name of another ApiToken of that
 * account): it stays active, since the API has no delete. An ApiToken moved to another account
 * leaves its old token behind, warned the same way. Not when its account is read and no longer
 * lists it (revoked already).
 */
export function removedTokenWarnings(
  ledger: ReadonlyMap<string, LedgerToken>,
  managed: readonly ManagedToken[],
  listedOn: (account: LedgerAccount) => TokenIndex | undefined,
): string[] {
  const prefixOf = (m: ManagedToken) => m.envPrefix ?? DEFAULT_ENV_PREFIX;
  const byPath = new Map(managed.map((m) => [m.path, m]));
  const names = new Set(managed.flatMap((m) => [m.name, ...m.previousNames].map((name) => `${prefixOf(m)} ${foldTokenName(name)}`)));
  // ApiTokens whose name is an expression the read is not given, without an entry of their own: one may adopt the token.
  const namedAtApply = managed.filter((m) => m.byLedger && !ledger.has(m.path));
  const lines: string[] = [];
  for (const [path, token] of ledger) {
    const now = byPath.get(path);
    const movedTo = now !== undefined && prefixOf(now) !== token.account.prefix ? prefixOf(now) : undefined;
    if (
      (now !== undefined && movedTo === undefined) ||
      names.has(`${token.account.prefix} ${foldTokenName(token.name)}`) ||
      token.id === ""
    )
      continue;
    const listed = listedOn(token.account);
    if (listed !== undefined && listed.byId(token.id) === undefined) continue;
    let unless = listed === undefined ? ", unless it was revoked since" : "";
    const why = movedTo === undefined ? "is no longer in the stack" : `moved to the account ${movedTo}*`;
    const adopters = namedAtApply.filter((m) => prefixOf(m) === token.account.prefix).map((m) => `"${m.path || m.key}"`);
    if (adopters.length > 0) {
      const which = adopters.length === 1 ? `the ApiToken ${adopters[0]} has` : `one of the ApiTokens ${adopters.join(", ")} has`;
      unless += `, unless ${which} that name (given as an expression, known only at apply)`;
    }
    lines.push(
      `API token "${token.name}" (id ${token.id}) on ${accountLabel(token.account)} (account ${token.account.prefix}*) stays ACTIVE${unless}: ` +
        `the ApiToken "${path}" ${why}, and the GPU cloud API has no delete operation. Revoke it in the cloud console ` +
        `if nothing uses it; an ApiToken named "${token.name}" would adopt it again.`,
    );
  }
  return lines;
}

/**
 * The error when a script of the apply has other credentials than its plan read with (a saved plan
 * applied with another environment's variables): the plan's checks of the account were for those.
 * Another credential of the same account is refused too: this script cannot tell it apart. `write`:
 * the refusing script is a token's create-time provisioner, whose failure taints its resource.
 */
export function notThePlansAccount(ticket: RunTicket | undefined, current: LedgerAccount, write: boolean): string | undefined {
  if (ticket?.accounts === undefined || ticket.accounts.includes(accountFingerprint(current))) return undefined;
  const tainted = write
    ? ` Terraform marks this token's resource tainted, as after any failed create-time provisioner: the next plan shows it ` +
      `"is tainted, so must be replaced", and applying that with the right credentials takes the same API token again.`
    : "";
  return (
    `this apply's credentials of account ${current.prefix}* log in as ${accountLabel(current)}, not as the credentials the ` +
    `plan it applies was made with, which its checks of the account were for (these may reach another account). Nothing was ` +
    `written to the GPU cloud API.${tainted} Apply with the credentials the plan was made with, or plan again with these.`
  );
}

/**
 * Where what the last apply managed could not be read and nothing pins the account, this plan
 * cannot tell whether the credentials reach the account the stack's tokens are on: it refuses,
 * naming the ways on (`fix` first), unless <prefix>UNCHECKED_ACCOUNT names this account (then it warns).
 */
export function unknownLastApply(
  unknown: { readonly reason: string; readonly fix: string },
  current: LedgerAccount,
  opts: { readonly env: NodeJS.ProcessEnv; readonly workspace: string },
): { readonly refusal: string } | { readonly warning: string } {
  const names = accountEnv(current.prefix);
  const label = accountLabel(current);
  const what = `what the last apply of this stack (workspace "${opts.workspace}") managed could not be read from its state (${unknown.reason})`;
  if (namesThisAccount(opts.env, names.UNCHECKED_ACCOUNT, current)) {
    return {
      warning:
        `${what}; ${names.UNCHECKED_ACCOUNT} lets this plan use the credentials of account ${current.prefix}* (${label}) ` +
        `without checking that they reach the account the last apply used. Remove it once the state can be read.`,
    };
  }
  return {
    refusal:
      `${what}, so this plan cannot tell whether the credentials of account ${current.prefix}* (${label}) reach the account ` +
      `the last apply used. Nothing was planned. ${unknown.fix}. Only if these are the credentials of the account this ` +
      `stack manages: pin it with GpuCloudAccount's allowedIdentities: ["${label}"] (docs/accounts.md), or, to plan with ` +
      `them unchecked on purpose, set ${names.UNCHECKED_ACCOUNT}="${label}".`,
  };
}

/** The warning when <prefix>UNCHECKED_ACCOUNT is set while this plan could read the state: it does nothing, and should go. */
export function uncheckedNotNeeded(current: LedgerAccount, env: NodeJS.ProcessEnv): string | undefined {
  const name = accountEnv(current.prefix).UNCHECKED_ACCOUNT;
  if ((env[name] ?? "").trim() === "") return undefined;
  return `${name} is set, but this plan read what the last apply managed and checked the account: remove ${name}.`;
}
