import { Token } from "cdktf";

/**
 * A token in cdktf's string encoding, to split a string into its literal parts and its tokens.
 * cdktf's public API (`Tokenization.reverseString`) gives the tokens but not where they stand, so
 * this one pattern leans on the encoding; test/constructs/terraform-literal.test.ts fails loudly
 * the day cdktf (or cdktn) writes string tokens differently.
 */
export const CDKTF_STRING_TOKEN = /\$\{TfToken\[[^\]]*\]\}/g;

/**
 * True when a string carries a cdktf token (a value Terraform resolves later), as cdktf itself
 * judges it (`Token.isUnresolved`). Anything else is text, `${` included, and is escaped on output.
 */
export function isCdktfToken(value: unknown): boolean {
  return typeof value === "string" && Token.isUnresolved(value);
}

function escapeLiteral(text: string): string {
  // (Replacement functions, not strings: "$$" in a replacement string means one "$".)
  return text.replace(/\$\{/g, () => "$${").replace(/%\{/g, () => "%%{");
}

/**
 * A string as written into the synthesized configuration so that Terraform reads it literally:
 * `${` and `%{` in it are template syntax to Terraform, so they are escaped (`$${`, `%%{`).
 * Only the literal parts are escaped; cdktf tokens embedded in the string stay expressions.
 */
export function terraformLiteral(value: string): string {
  if (!isCdktfToken(value)) return escapeLiteral(value);
  let out = "";
  let last = 0;
  for (const match of value.matchAll(CDKTF_STRING_TOKEN)) {
    // A "$" right before the token's "${" would read as the escape "$${": write it as ${"$"}.
    out += escapeLiteral(value.slice(last, match.index)).replace(/\$$/, () => '${"$"}') + match[0];
    last = (match.index ?? 0) + match[0].length;
  }
  return out + escapeLiteral(value.slice(last));
}
