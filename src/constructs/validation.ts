import { Annotations, Token } from "cdktf";
import type { Construct } from "constructs";

import { isCdktfToken } from "./terraform-literal";

/** An error in a construct's props, raised at synth time and naming the construct's path. */
export function propError(scope: Construct, kind: string, message: string): Error {
  return new Error(`${kind} "${scope.node.path}": ${message}`);
}

/** Length as the API counts it: characters (code points), not UTF-16 units. */
function characterCount(value: string): number {
  return [...value].length;
}

/**
 * True for a value known at synth time (not a token that Terraform resolves later). A string is
 * known unless it carries a cdktf token: a literal `${` is text here (it is escaped on output).
 */
export function isKnown(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value === "string") return !isCdktfToken(value);
  return !Token.isUnresolved(value);
}

/**
 * A URL as quoted in a message: not at all when it holds an "@", which may follow a credential
 * (`https://user:password@host`), even when the text is too malformed to be parsed as a URL.
 */
export function quotedUrl(text: string): string {
  return text.includes("@") ? 'a value with an "@" (not shown: it may hold a credential)' : `"${text}"`;
}

/** `text` as an http:// or https:// URL; undefined for anything else. */
export function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A non-secret http(s) URL: userinfo would put a credential into cdk.tf.json. */
export function checkBaseUrl(
  scope: Construct,
  kind: string,
  baseUrl: string | undefined,
  names: { readonly USERNAME: string; readonly PASSWORD: string; readonly API_TOKEN: string } = {
    USERNAME: "GPUCLOUD_USERNAME",
    PASSWORD: "GPUCLOUD_PASSWORD",
    API_TOKEN: "GPUCLOUD_API_TOKEN",
  },
): void {
  if (!isKnown(baseUrl)) return;
  const url = httpUrl(baseUrl as string);
  if (url === undefined) {
    throw propError(scope, kind, `baseUrl must be an http:// or https:// URL, got ${quotedUrl(baseUrl as string)}`);
  }
  if (url.username || url.password) {
    throw propError(
      scope,
      kind,
      "baseUrl must not contain credentials: they would be written into cdk.tf.json. " +
        `Set ${names.USERNAME}/${names.PASSWORD} or ${names.API_TOKEN} in the environment of terraform instead`,
    );
  }
}

/**
 * A token name as the API accepts it, checked when it is known at synth time: a string, not
 * blank, 1 to `max` characters (code points, as the spec counts). A server that counts UTF-16
 * units instead would reject some names the spec allows, so that case is a warning.
 */
export function checkTokenName(scope: Construct, kind: string, field: string, value: unknown, max: number): void {
  if (!isKnown(value)) {
    if (value === undefined) throw propError(scope, kind, `${field} is required`);
    return;
  }
  if (typeof value !== "string") throw propError(scope, kind, `${field} must be a string`);
  if (value.trim().length === 0) {
    throw propError(scope, kind, `${field} must not be blank or only white space (the API needs 1 to ${max} characters)`);
  }
  const length = characterCount(value);
  if (length > max) {
    throw propError(
      scope,
      kind,
      `${field} must be 1 to ${max} characters (the API's limit), got ${length}: "${[...value].slice(0, max).join("")}…"`,
    );
  }
  if (value !== value.trim()) {
    Annotations.of(scope).addWarning(
      `${kind} "${scope.node.path}": ${field} ${JSON.stringify(value)} starts or ends with white space; names are matched ` +
        `exactly, so a server that trims names would store another name (the apply then stops and says so)`,
    );
  }
  if (value.length > max) {
    Annotations.of(scope).addWarning(
      `${kind} "${scope.node.path}": ${field} is ${length} characters but ${value.length} UTF-16 units; ` +
        `the API's limit is ${max} characters, and a server that counts UTF-16 units would reject it`,
    );
  }
}
