import { Token } from "cdktf";
import type { Construct } from "constructs";

/** An error in a construct's props, raised at synth time and naming the construct's path. */
export function propError(scope: Construct, kind: string, message: string): Error {
  return new Error(`${kind} "${scope.node.path}": ${message}`);
}

/** Length as the API counts it: characters (code points), not UTF-16 units. */
export function characterCount(value: string): number {
  return [...value].length;
}

/** True for a value known at synth time (not a token that Terraform resolves later). */
export function isKnown(value: unknown): boolean {
  return value !== undefined && !Token.isUnresolved(value);
}

/** A non-secret http(s) URL: userinfo would put a credential into cdk.tf.json. */
export function checkBaseUrl(scope: Construct, kind: string, baseUrl: string | undefined): void {
  if (!isKnown(baseUrl)) return;
  let url: URL;
  try {
    url = new URL(baseUrl as string);
  } catch {
    throw propError(scope, kind, `baseUrl must be an http:// or https:// URL, got "${baseUrl}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw propError(scope, kind, `baseUrl must be an http:// or https:// URL, got "${baseUrl}"`);
  }
  if (url.username || url.password) {
    throw propError(
      scope,
      kind,
      "baseUrl must not contain credentials: they would be written into cdk.tf.json. " +
        "Set GPUCLOUD_USERNAME/GPUCLOUD_PASSWORD or GPUCLOUD_API_TOKEN in the environment of terraform instead",
    );
  }
}
