/**
 * Query of `token-value` (stdin of the ephemeral `local_command`, one flat JSON object of strings):
 * `<token key>.id` (not a secret) and, when the construct sets one, `<token key>.base_url`. The
 * result (stdout, one JSON object, decoded by the constructs with jsondecode()) maps each token
 * key to the token's value.
 */
export const TokenValueField = {
  ID: "id",
  /** Optional, non-secret override of GPUCLOUD_BASE_URL. */
  BASE_URL: "base_url",
  /** The account's variable prefix (not a secret); absent for the default account. */
  ENV_PREFIX: "env_prefix",
} as const;
