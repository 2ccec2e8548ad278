import { Construct } from "constructs";

import { accountEnv, DEFAULT_ENV_PREFIX, ENV_PREFIX_PATTERN, parseAllowedIdentity, RESERVED_ENV_PREFIXES } from "../protocol";
import { checkBaseUrl, httpUrl, isKnown, propError, quotedUrl } from "./validation";

export interface GpuCloudAccountProps {
  /**
   * Where the scripts read this account's settings and credentials, from the environment of the
   * process that runs terraform: `<envPrefix>BASE_URL`, `<envPrefix>API_TOKEN`,
   * `<envPrefix>USERNAME`, `<envPrefix>PASSWORD`, `<envPrefix>PASSWORD_MD5`. Upper-case letters,
   * digits and `_`, ending in `_`, e.g. `GPUCLOUD_PROD_`. Not a secret: it is written into the
   * synthesized configuration (the values never are).
   * @default "GPUCLOUD_"
   */
  readonly envPrefix?: string;
  /**
   * The API's base URL, overriding `<envPrefix>BASE_URL`. Not a secret: it is written into the
   * synthesized configuration.
   * @default - the `<envPrefix>BASE_URL` environment variable of the terraform process
   */
  readonly baseUrl?: string;
  /**
   * The deployments this account's credentials may reach: each an identity at an API address, as
   * plans print them: `user <name> at <url>`, or `API token sha256:<12 hex> at <url>` for an API
   * token (a digest, never the token). Every plan of a stack with ApiTokens on this account fails
   * when its credentials are another identity or reach another address, as the AWS provider's
   * `allowed_account_ids` fails on another account; for runners where the plan cannot read what the
   * last apply managed (docs/accounts.md). Rotating an API token changes its identity: add the new
   * one before you rotate.
   * @default - any identity at any address, checked against what the last apply managed
   */
  readonly allowedIdentities?: string[];
}

/**
 * A GPU cloud account (and API address), like a provider alias: `ApiToken`, `Flavors` and
 * `FlavorPreference` given `account` use it instead of the default account (`GPUCLOUD_*`).
 * It holds no secret: the credentials are read from the environment at plan and apply time,
 * under the account's prefix. Create it in a stack (CDK Terrain's default check fails synthesis
 * on constructs directly under the app); the constructs of every stack of the app may use it.
 */
export class GpuCloudAccount extends Construct {
  /** The prefix of the default account's variables. */
  public static readonly DEFAULT_ENV_PREFIX = DEFAULT_ENV_PREFIX;

  /** The prefix of this account's variables. */
  public readonly envPrefix: string;
  /** The base URL, when given; otherwise `<envPrefix>BASE_URL` is read at plan and apply time. */
  public readonly baseUrl?: string;
  /** The identities its credentials may log in as, when pinned. */
  public readonly allowedIdentities?: string[];

  constructor(scope: Construct, id: string, props: GpuCloudAccountProps = {}) {
    super(scope, id);
    const kind = "GpuCloudAccount";
    const envPrefix = props.envPrefix ?? DEFAULT_ENV_PREFIX;
    if (typeof envPrefix !== "string" || !isKnown(envPrefix)) {
      throw propError(
        this,
        kind,
        "envPrefix must be a literal string (the prefix of environment variable names), not a Terraform expression",
      );
    }
    if (!ENV_PREFIX_PATTERN.test(envPrefix)) {
      throw propError(
        this,
        kind,
        `envPrefix must be upper-case letters, digits and "_", start with a letter or "_" and end with "_" ` +
          `(e.g. "GPUCLOUD_PROD_"), got ${JSON.stringify(envPrefix.slice(0, 60))}`,
      );
    }
    if (RESERVED_ENV_PREFIXES.includes(envPrefix)) {
      throw propError(
        this,
        kind,
        `envPrefix "${envPrefix}" is reserved (the scripts' own inputs use it); choose another, e.g. "GPUCLOUD_PROD_"`,
      );
    }
    checkBaseUrl(this, kind, props.baseUrl, accountEnv(envPrefix));
    checkIdentities(this, kind, props.allowedIdentities);
    this.envPrefix = envPrefix;
    this.baseUrl = props.baseUrl;
    this.allowedIdentities = props.allowedIdentities ? [...props.allowedIdentities] : undefined;
  }
}

function checkIdentities(scope: Construct, kind: string, identities: readonly string[] | undefined): void {
  if (identities === undefined) return;
  if (!Array.isArray(identities) || identities.length === 0) {
    throw propError(scope, kind, "allowedIdentities must be a non-empty list (leave it out to allow any identity)");
  }
  identities.forEach((identity, i) => {
    const parsed = typeof identity === "string" && isKnown(identity) ? parseAllowedIdentity(identity) : undefined;
    const url = parsed !== undefined ? httpUrl(parsed.api) : undefined;
    if (parsed !== undefined && (url === undefined || url.username !== "" || url.password !== "")) {
      throw propError(scope, kind, `allowedIdentities[${i}]: the API address must be a URL without user information`);
    }
    if (parsed === undefined) {
      throw propError(
        scope,
        kind,
        `allowedIdentities[${i}] must be an identity at an API address as plans print it, "user <name> at <url>" or ` +
          `"API token sha256:<12 hex> at <url>", got ${typeof identity === "string" ? quotedUrl(identity.slice(0, 80)) : JSON.stringify(identity)}`,
      );
    }
  });
}

/** The account a construct uses, as its synthesized inputs need it. */
export interface ResolvedAccount {
  /** The prefix of the account's variables. */
  readonly envPrefix: string;
  /** The account's or the construct's base URL, if any. */
  readonly baseUrl?: string;
  /** The prefix as written into the configuration: undefined for the default account, which writes none. */
  readonly envPrefixInput?: string;
  /** The identities the account's credentials may log in as, when pinned. */
  readonly allowedIdentities?: readonly string[];
}

/**
 * The account of a construct with the props `account` and `baseUrl`. Both at once is refused:
 * the account's address would be ambiguous.
 */
export function resolveAccount(
  scope: Construct,
  kind: string,
  props: { readonly account?: GpuCloudAccount; readonly baseUrl?: string },
): ResolvedAccount {
  const account = props.account;
  if (account === undefined) return { envPrefix: DEFAULT_ENV_PREFIX, baseUrl: props.baseUrl };
  if (!(account instanceof GpuCloudAccount)) throw propError(scope, kind, "account must be a GpuCloudAccount");
  if (props.baseUrl !== undefined) {
    throw propError(
      scope,
      kind,
      `both account and baseUrl are given: put baseUrl on the GpuCloudAccount "${account.node.path}" (its baseUrl prop) and remove it here`,
    );
  }
  return {
    envPrefix: account.envPrefix,
    baseUrl: account.baseUrl,
    envPrefixInput: account.envPrefix === DEFAULT_ENV_PREFIX ? undefined : account.envPrefix,
    allowedIdentities: account.allowedIdentities,
  };
}
