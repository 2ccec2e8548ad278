/**
 * The API's operations as requests (spec §4): what each sends, how its answer is decoded, and
 * the checks made before anything is sent. How they are retried is decided by the façade.
 */
import { foldTokenName, MAX_TOKEN_NAME_LENGTH } from "../protocol/token-name";
import { GpuCloudError } from "./errors";
import type { ApiToken, FlavorRegionGroup, TokenList } from "./schemas";
import { decodeFlavors, decodeToken, decodeTokenList } from "./schemas";
import type { HttpCall } from "./transport";

export { MAX_TOKEN_NAME_LENGTH };

const LIST_FLAVORS = "list flavors (GET /flavors)";
export const LOGIN_OPERATION = "log in (POST /authenticate/login)";
export const LIST_TOKENS = "list API tokens (GET /api-tokens)";
export const CREATE_TOKEN = "create API token (POST /api-tokens)";

/** Name and optional description of an API token (create and update bodies). */
export interface TokenInput {
  readonly name: string;
  readonly description?: string;
}

function invalid(operation: string, detail: string): never {
  throw new GpuCloudError({ operation, kind: "validation", detail });
}

export function listFlavorsCall(regionId: string | undefined): HttpCall<FlavorRegionGroup[]> {
  if (regionId !== undefined && (typeof regionId !== "string" || regionId === ""))
    invalid(LIST_FLAVORS, "regionId must be a non-empty string");
  return { operation: LIST_FLAVORS, method: "GET", path: "/flavors", query: { region_id: regionId }, decode: decodeFlavors };
}

/** Query parameters of GET /api-tokens (spec §4.5). */
export interface ListTokensParams {
  readonly limit?: number;
  readonly offset?: number;
  /** A field to order by, e.g. `created_at` (allowed names: not in the spec). */
  readonly sortField?: string;
  readonly sortOrder?: "asc" | "desc";
}

export function listTokensCall(params: ListTokensParams): HttpCall<TokenList> {
  const { limit, offset, sortField, sortOrder } = params;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) invalid(LIST_TOKENS, "limit must be a positive integer");
  if (offset !== undefined && !(Number.isInteger(offset) && offset >= 0)) invalid(LIST_TOKENS, "offset must be a non-negative integer");
  if (sortField !== undefined && (typeof sortField !== "string" || sortField === ""))
    invalid(LIST_TOKENS, "sortField must be a non-empty string");
  if (sortOrder !== undefined && sortOrder !== "asc" && sortOrder !== "desc") invalid(LIST_TOKENS, 'sortOrder must be "asc" or "desc"');
  return {
    operation: LIST_TOKENS,
    method: "GET",
    path: "/api-tokens",
    query: { limit, offset, sortField, sortOrder },
    decode: decodeTokenList,
  };
}

export function createTokenCall(input: TokenInput): HttpCall<ApiToken> {
  return { operation: CREATE_TOKEN, method: "POST", path: "/api-tokens", body: tokenBody(input, CREATE_TOKEN), decode: decodeToken };
}

export function updateTokenCall(id: string, input: TokenInput): HttpCall<ApiToken> {
  const path = `/api-tokens/${typeof id === "string" ? encodeURIComponent(id) : ""}`;
  const operation = `update API token (PUT ${path})`;
  if (typeof id !== "string" || id === "") invalid(operation, "id must be a non-empty string");
  return { operation, method: "PUT", path, body: tokenBody(input, operation), decode: decodeToken };
}

function tokenBody(input: TokenInput, operation: string): { name: string; description?: string } {
  if (input === null || typeof input !== "object") return invalid(operation, "a token needs a name");
  const { name, description } = input;
  if (typeof name !== "string") return invalid(operation, "name must be a string");
  const length = [...name].length;
  if (length < 1 || length > MAX_TOKEN_NAME_LENGTH) {
    invalid(operation, `name must be 1 to ${MAX_TOKEN_NAME_LENGTH} characters (Unicode code points), got ${length}`);
  }
  if (description !== undefined && typeof description !== "string") invalid(operation, "description must be a string");
  return description === undefined ? { name } : { name, description };
}

/** The newest token whose name folds to `name`'s (greatest `created_at`, then the later in the list), or undefined. */
export function newestNamed(tokens: readonly ApiToken[], name: string): ApiToken | undefined {
  let newest: ApiToken | undefined;
  // By the folded name: a server may store "ci " as "ci" or "CI" as "ci", and the caller creates
  // only when no token's name folds to this one.
  const folded = foldTokenName(name);
  for (const token of tokens) {
    if (foldTokenName(token.name) === folded && (newest === undefined || token.created_at >= newest.created_at)) newest = token;
  }
  return newest;
}
