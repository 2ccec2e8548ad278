/** The longest token name the API accepts (spec §8), in Unicode code points. */
export const MAX_TOKEN_NAME_LENGTH = 50;

/**
 * A token name as a server might store it: in Unicode NFC, without surrounding white space,
 * lower-cased. The spec does not say whether names are stored as given; two names with the same
 * folded form are treated as one name whenever a create is decided, and the constructs refuse two
 * ApiTokens of an app that claim one folded name on one account.
 */
export function foldTokenName(name: string): string {
  return name.normalize("NFC").trim().toLowerCase();
}
