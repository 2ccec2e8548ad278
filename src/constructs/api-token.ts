import { DataExternal } from "@cdktf/provider-external/lib/data-external";
import { Resource } from "@cdktf/provider-null/lib/resource";
import { Fn, Op, Token } from "cdktf";
import { Construct } from "constructs";
import {
  IN_SYNC,
  CredentialEnv,
  RuntimeCommand,
  TokenEnv,
  TokenTrigger,
  type TokenQuery,
} from "../runtime/protocol";
import { ensureExternalProvider, ensureNullProvider } from "./providers";
import { externalProgram, provisionerCommand } from "./runtime-script";
import { characterCount, checkBaseUrl, isKnown, propError } from "./validation";

/** The API's limit on a token's name (spec §8). */
const NAME_MAX_LENGTH = 50;

export interface ApiTokenProps {
  /**
   * The token's name, 1 to 50 characters. It identifies the token: the first deploy adopts a
   * token that already has this name instead of creating a second one. Changing it renames the
   * same token.
   */
  readonly name: string;
  /**
   * The token's description. When omitted, the description is not managed: an adopted token
   * keeps whatever description it has.
   */
  readonly description?: string;
  /**
   * The API's base URL, overriding `GPUCLOUD_BASE_URL` from the environment. Not a secret: it is
   * written into the synthesized configuration.
   * @default - the GPUCLOUD_BASE_URL environment variable of the terraform process
   */
  readonly baseUrl?: string;
}

/**
 * A long-lived API token of the GPU cloud, created or adopted, renamed and updated by
 * Terraform. The API has no delete operation: destroying this construct removes it from the
 * state and warns that the token stays active.
 *
 * Behind it, three Terraform objects:
 * - `data.external` "observe", read at every plan: does the API hold the configured token?
 * - `null_resource` "sync", whose creation-time provisioner writes to the API. Its triggers
 *   change when the configuration changes or the observation finds drift, so Terraform replaces
 *   it and the provisioner runs again; otherwise the plan is empty and nothing is written.
 * - `data.external` "read", after "sync": the attributes this construct exposes.
 */
export class ApiToken extends Construct {
  /** The API's limit on a token's name, in characters. */
  public static readonly NAME_MAX_LENGTH = NAME_MAX_LENGTH;

  /** The token's id. */
  public readonly tokenId: string;
  /**
   * The token's value. Sensitive: Terraform refuses an output built from it unless the output
   * is marked `sensitive: true`.
   */
  public readonly token: string;
  /** Creation time as the API reports it (an integer; the spec shows neither unit nor epoch). */
  public readonly createdAt: number;
  /** Last use as the API reports it; 0 means never used. */
  public readonly lastUsed: number;
  /** The name, as configured. */
  public readonly name: string;

  constructor(scope: Construct, id: string, props: ApiTokenProps) {
    super(scope, id);
    validateProps(this, props);
    ensureNullProvider(this);
    ensureExternalProvider(this);

    this.name = props.name;
    const manageDescription = props.description !== undefined;
    const key = this.node.addr;

    const query: TokenQuery = {
      name: props.name,
      ...(manageDescription ? { description: props.description } : {}),
      ...(props.baseUrl !== undefined ? { base_url: props.baseUrl } : {}),
    };
    const observe = new DataExternal(this, "observe", {
      program: externalProgram(this, RuntimeCommand.TOKEN_OBSERVE),
      query: { ...query },
    });

    // Known and constant while the API matches the configuration. On drift it is unknown during
    // plan (timestamp() is only known at apply), which forces a replacement, and it becomes
    // "true" when applied, so the next plan finds nothing to do.
    const apiInSync = Fn.conditional(
      Op.eq(observe.result.lookup("in_sync"), "true"),
      IN_SYNC,
      // (Compared with a word, not "": cdktf renders the literals "" and 0 as `undefined`.)
      Fn.conditional(Op.eq(Fn.timestamp(), "never"), "never", IN_SYNC),
    );

    const sync = new Resource(this, "sync", {
      triggers: {
        [TokenTrigger.NAME]: props.name,
        ...(manageDescription ? { [TokenTrigger.DESCRIPTION]: props.description as string } : {}),
        [TokenTrigger.KEY]: key,
        ...(props.baseUrl !== undefined ? { [TokenTrigger.BASE_URL]: props.baseUrl } : {}),
        [TokenTrigger.API_IN_SYNC]: Token.asString(apiInSync),
      },
      provisioners: [
        {
          type: "local-exec",
          command: provisionerCommand(this, RuntimeCommand.TOKEN_APPLY),
          environment: {
            [TokenEnv.NAME]: props.name,
            ...(manageDescription ? { [TokenEnv.DESCRIPTION]: props.description as string } : {}),
            [TokenEnv.KEY]: key,
            ...(props.baseUrl !== undefined ? { [CredentialEnv.BASE_URL]: props.baseUrl } : {}),
          },
        },
        {
          // Destroy-time provisioners may only refer to `self`: everything comes from the triggers.
          type: "local-exec",
          when: "destroy",
          command: provisionerCommand(this, RuntimeCommand.TOKEN_RELEASE),
          environment: {
            [TokenEnv.NAME]: `\${self.triggers.${TokenTrigger.NAME}}`,
            [TokenEnv.KEY]: `\${self.triggers.${TokenTrigger.KEY}}`,
            ...(props.baseUrl !== undefined
              ? { [CredentialEnv.BASE_URL]: `\${self.triggers.${TokenTrigger.BASE_URL}}` }
              : {}),
          },
        },
      ],
    });

    const read = new DataExternal(this, "read", {
      program: externalProgram(this, RuntimeCommand.TOKEN_READ),
      query: {
        name: props.name,
        ...(props.baseUrl !== undefined ? { base_url: props.baseUrl } : {}),
      },
      // Read after the write when "sync" changes; at plan time otherwise.
      dependsOn: [sync],
    });

    this.tokenId = read.result.lookup("id");
    this.token = Token.asString(Fn.sensitive(read.result.lookup("token")));
    this.createdAt = Token.asNumber(Fn.tonumber(read.result.lookup("created_at")));
    this.lastUsed = Token.asNumber(Fn.tonumber(read.result.lookup("last_used")));
  }
}

function validateProps(scope: Construct, props: ApiTokenProps): void {
  const kind = "ApiToken";
  if (props === undefined || props === null) throw propError(scope, kind, "props are required (at least a name)");
  if (!isKnown(props.name)) {
    if (props.name === undefined) throw propError(scope, kind, "name is required");
  } else {
    if (typeof props.name !== "string") throw propError(scope, kind, "name must be a string");
    const length = characterCount(props.name);
    if (length < 1 || length > NAME_MAX_LENGTH) {
      throw propError(
        scope,
        kind,
        `name must be 1 to ${NAME_MAX_LENGTH} characters (the API's limit), got ${length}` +
          (length > 0 ? `: "${[...props.name].slice(0, NAME_MAX_LENGTH).join("")}…"` : ""),
      );
    }
  }
  if (isKnown(props.description) && typeof props.description !== "string") {
    throw propError(scope, kind, "description must be a string");
  }
  checkBaseUrl(scope, kind, props.baseUrl);
}
