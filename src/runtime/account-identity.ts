import type { Credentials } from "../client/credentials";
import { DEFAULT_ENV_PREFIX, type LedgerAccount } from "../protocol";
import { loadConfig } from "../shared/config";
import { sha256Hex } from "./io/crypto";

/*
 * Which account a script works on, as messages and the ledger name it: the API address, the
 * account's variable prefix, and the credential the environment gives for it.
 */

/**
 * The API address as accounts are compared: trailing slashes, surrounding spaces, the
 * case of the scheme and host and a default port do not count; the path's case does (`/TenantA`
 * and `/tenanta` are two APIs). An address that does not parse is only trimmed.
 */
function normalizeApiUrl(apiUrl: string): string {
  const trimmed = apiUrl.trim();
  let normalized = trimmed;
  try {
    // URL lower-cases the scheme and host and drops a default port; it leaves the path's case.
    const url = new URL(trimmed);
    normalized = `${url.protocol}//${url.username || url.password ? `${url.username}:${url.password}@` : ""}${url.host}${url.pathname}${url.search}`;
  } catch {
    // not a URL: compared as written
  }
  return normalized.replace(/\/+$/, "");
}

/** The API address as messages and the ledger name it: normalized, without user information. */
export function apiAddress(apiUrl: string): string {
  try {
    const url = new URL(apiUrl.trim());
    url.username = "";
    url.password = "";
    return normalizeApiUrl(url.toString());
  } catch {
    return normalizeApiUrl(apiUrl);
  }
}

/**
 * Who the credentials log in as, for keys and messages, never a secret: `user <name>` for a
 * password login, `API token sha256:<12 hex>` for an API token (a digest of a long random value,
 * which cannot be turned back into it).
 */
function credentialIdentity(credentials: Credentials): string {
  if ("apiToken" in credentials && credentials.apiToken !== undefined) {
    return `API token sha256:${sha256Hex(credentials.apiToken.trim()).slice(0, 12)}`;
  }
  return `user ${(credentials as { username: string }).username}`;
}

/** One account as a script works on it: its prefix, API address and credential. */
export interface AccountRef {
  readonly envPrefix: string;
  readonly apiUrl: string;
  readonly identity: string;
}

/**
 * The account a script works on, from its environment: the construct's base URL (else the
 * prefix's BASE_URL variable) and who its credentials log in as. Throws the configuration's own
 * error when the credentials are missing or inconsistent, as connecting would.
 */
export function accountRefIn(env: NodeJS.ProcessEnv, envPrefix: string | undefined, baseUrl: string | undefined): AccountRef {
  const prefix = envPrefix ?? DEFAULT_ENV_PREFIX;
  const config = loadConfig(env, baseUrl, prefix);
  return { envPrefix: prefix, apiUrl: config.baseUrl, identity: credentialIdentity(config.credentials) };
}

/** An account as the ledger and messages name it (see LedgerAccount), from a script's account. */
export function ledgerAccountOf(account: AccountRef): LedgerAccount {
  return { prefix: account.envPrefix, api: apiAddress(account.apiUrl), identity: account.identity };
}

/**
 * A short digest of an account (prefix, API address, identity): the one notion of "the same account"
 * the scripts compare (the run's ticket lists the accounts its plan read).
 */
export function accountFingerprint(account: LedgerAccount): string {
  return sha256Hex(`${account.prefix}\n${account.api}\n${account.identity}`).slice(0, 12);
}
