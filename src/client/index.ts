/**
 * Client of the GPU cloud API: HTTP (undici), validated responses (zod), credentials,
 * retries, pagination and flavor selection. Knows nothing of cdktf.
 */
export { GpuCloudClient } from "./gpu-cloud-client";
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_TOTAL_TIMEOUT_MS,
  DEFAULT_CREATE_SETTLE_WINDOW_MS,
  DEFAULT_CREATE_SETTLE_WINDOW_AFTER_SERVER_ERROR_MS,
  MAX_TOKEN_NAME_LENGTH,
} from "./client";
export type { GpuCloudClientOptions, LoginInfo, TokenInput } from "./client";
export { GpuCloudError, ERROR_KINDS, isGpuCloudError } from "./errors";
export type { GpuCloudErrorKind } from "./errors";
export { md5Hex, jwtExpiryMs } from "./credentials";
export type { Credentials, PasswordCredentials, PasswordMd5Credentials, ApiTokenCredentials } from "./credentials";
export { listAllTokens, DEFAULT_PAGE_SIZE, DEFAULT_MAX_WALKS, DEFAULT_WALK_CONCURRENCY } from "./pagination";
export { listTokensSince } from "./tokens-since";
export type { ListAllTokensOptions, ListTokensParams, TokenPageSource, TokensSinceMark, TokensSinceOptions } from "./pagination";
export { Redactor, REDACTED } from "./redact";
export { DEFAULT_RETRY_POLICY, MAX_TIMER_MS } from "./retry";
export type { RetryPolicy } from "./retry";
export {
  ApiTokenSchema,
  FlavorSchema,
  FlavorRegionGroupSchema,
  LoginDataSchema,
  EnvelopeBaseSchema,
  TokenListSchema,
  FlavorListResponseSchema,
  TokenListResponseSchema,
  TokenResponseSchema,
  LoginResponseSchema,
} from "./schemas";
export type { ApiToken, Flavor, FlavorRegionGroup, LoginData, TokenList, EnvelopeBase } from "./schemas";
export {
  selectFlavors,
  describeOffer,
  describeFilter,
  isSpotFlavor,
  gpuModel,
  gpuMatches,
  compareFlavors,
  regionIdsOf,
  askedRegions,
  wantedRegions,
  wantedGpus,
  formatPrice,
} from "./flavor-filter";
export type { FlavorFilter } from "./flavor-filter";
