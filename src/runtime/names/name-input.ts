import { MAX_TOKEN_NAME_LENGTH } from "../../protocol";
import { ConfigError } from "../../shared/config";

/** A name as the API accepts it: not blank, at most {@link MAX_TOKEN_NAME_LENGTH} characters (the client's own limit). */
export function requireName(value: string | undefined, field: string): string {
  if (value === undefined || value.trim().length === 0) {
    throw new ConfigError(`${field} is required and must not be blank (the API token's name)`);
  }
  const length = [...value].length;
  if (length > MAX_TOKEN_NAME_LENGTH) {
    throw new ConfigError(`${field}: an API token's name is at most ${MAX_TOKEN_NAME_LENGTH} characters, got ${length}`);
  }
  return value;
}
