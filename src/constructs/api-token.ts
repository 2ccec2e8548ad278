import { type IResolvable, type ITerraformDependable, ref, TerraformStack, Token } from "cdktf";
import { Construct } from "constructs";

import { IN_SYNC, StackReadResultField } from "../protocol";
import { type GpuCloudAccount, resolveAccount } from "./account";
import { ensureExternalProvider, ensureNullProvider } from "./providers";
import { StackRead } from "./stack-read";
import { TokenRoster } from "./token-roster";
import { TokenWriter } from "./token-writer";
import { checkBaseUrl, checkTokenName, isKnown, propError } from "./validation";

/** The API's limit on a token's name (spec §8). */
const NAME_MAX_LENGTH = 50;

export interface ApiTokenProps {
  /**
   * The token's name, 1 to 50 characters, not blank. It identifies the token: the first deploy
   * adopts a token that already has this name instead of creating a second one. Changing it
   * renames the token the last apply managed for this construct (the state keeps it). A name (or a
   * previous name) given as a Terraform expression is resolved at apply: the plan knows the token by
   * the state alone, and a value unknown at plan changes only this token's plan.
   */
  readonly name: string;
  /**
   * The token's description. When omitted, the description is not managed: an adopted token
   * keeps whatever description it has.
   */
  readonly description?: string;
  /**
   * Names this token had before, most recent first. When no token has `name`, a token with one
   * of these names is renamed to `name`, never a new token created. A rename needs them only where
   * the state does not know the token (another stack or workspace deployed it, or the construct's
   * path changed too). Like Terraform's `moved` blocks: keep them while old deployments may still exist.
   * @default - no previous names
   */
  readonly previousNames?: string[];
  /**
   * The API's base URL, overriding `GPUCLOUD_BASE_URL` from the environment. Not a secret: it is
   * written into the synthesized configuration. With `account`, give it on the account instead.
   * @default - the GPUCLOUD_BASE_URL environment variable of the terraform process
   */
  readonly baseUrl?: string;
  /**
   * The account the token lives on. Moving a token to another account creates (or adopts) a
   * token of this name there; the old token stays active on the old account (the log says so).
   * @default - the default account (GPUCLOUD_* variables)
   */
  readonly account?: GpuCloudAccount;
  /**
   * Whether the token's value is kept in the Terraform state (and so in saved plan files and
   * `terraform show`), where `token` reads it. With `false`, no state or plan file holds the
   * value: read it through `ephemeralToken` (Terraform >= 1.10), which Terraform passes only to
   * write-only arguments, provider configuration, provisioners and other ephemeral contexts.
   * Switching either way changes no token; the next apply adds or removes the value in the state.
   * @default true
   */
  readonly valueInState?: boolean;
}

/**
 * A long-lived API token of the GPU cloud, created or adopted, renamed and updated by
 * Terraform. The API has no delete operation: destroying the stack or removing this construct
 * removes it from the state, and the apply warns that the token stays active (the stack's roster,
 * a `terraform_data`; not when the last construct of this library leaves the stack's code).
 *
 * Behind it:
 * - the stack's one `data.external` read (shared by every ApiToken of the stack), run at
 *   every plan: does the API hold each configured token, and what are its attributes?
 * - the stack's writer of its account (a `null_resource`, see TokenWriter), whose triggers hold this
 *   token's name, description and drift marker under its construct path: a change replaces the
 *   writer, whose one creation-time provisioner makes every write of the apply on the account;
 *   otherwise the plan is empty and nothing is written.
 * - the `data.external` read after the writes of its account, which has an instance only while the
 *   plan-time read has no id for some token of the account (a create). A token the plan-time read
 *   found, in sync or updated in place, takes its attributes from it, known at plan time; the
 *   others, from that read.
 * - the stack's roster (`terraform_data`), which warns about the tokens a stack stops managing.
 */
export class ApiToken extends Construct implements ITerraformDependable {
  /** The API's limit on a token's name, in characters. */
  public static readonly NAME_MAX_LENGTH = NAME_MAX_LENGTH;

  /** The name, as configured, in Unicode NFC (as Terraform keeps every string). */
  public readonly name: string;
  /** Whether the state holds the token's value (the `valueInState` prop). */
  public readonly valueInState: boolean;
  /** Builds an attribute's reference; see the constructor. */
  private readonly attribute: (field: string, wrap: string) => IResolvable;
  private readonly attributes = new Map<string, IResolvable>();
  /** The Terraform expression (text) of the token's id; see the constructor. */
  private readonly idExpression: string;
  /** Where the token lives, for the ephemeral read: the account's base URL and variable prefix. */
  private readonly where: { readonly baseUrl?: string; readonly envPrefix?: string };
  private ephemeral?: IResolvable;

  constructor(scope: Construct, id: string, props: ApiTokenProps) {
    super(scope, id);
    // Terraform keeps every string in Unicode NFC, and the writer's literal inputs do not pass through it: the
    // same text both ways (and the limits counted on it), or a name written as "e" + U+0301 would never be
    // found again as the plan's "é".
    props = inNfc(props);
    validateProps(this, props);
    const account = resolveAccount(this, "ApiToken", props);
    ensureNullProvider(this);
    ensureExternalProvider(this);

    const { name, description } = props;
    const previousNames = props.previousNames ?? [];
    this.name = name;
    this.valueInState = props.valueInState ?? true;
    const key = this.node.addr;
    // Only for an account other than the default one: the default account adds nothing to the configuration.
    const envPrefix = account.envPrefixInput;

    const writer = TokenWriter.of(this, { envPrefix, baseUrl: account.baseUrl });
    const stackRead = StackRead.of(this);
    stackRead.register(
      this,
      {
        key,
        name,
        description,
        previousNames,
        baseUrl: account.baseUrl,
        envPrefix,
        valueInState: this.valueInState,
        allowedIdentities: account.allowedIdentities,
      },
      writer,
    );
    this.where = { baseUrl: account.baseUrl, envPrefix };
    // The expressions below are written as Terraform text, not built from cdktf's Fn/Op tokens:
    // every cdktf token captures a stack trace when created, which made synthesis much slower
    // than the same elements declared by hand (docs/performance.md).
    const inSync = `${stackRead.resultField(key, StackReadResultField.IN_SYNC)} == "true"`;
    // Known and constant while the API matches the configuration. On drift it is unknown during
    // plan (timestamp() is only known at apply), which replaces the writer, and it becomes "true"
    // when applied, so the next plan finds nothing to do.
    // Props given as expressions reach the writer and the roster from the stack's `given` local (see StackRead.givenProps).
    const given = stackRead.givenProps(this);
    writer.add(
      {
        path: this.node.path,
        name,
        description,
        idExpression: stackRead.resultField(key, StackReadResultField.ID),
        given: given && { name: given("n"), description: given("d"), previousNames: given("p") },
        inSyncExpression: `\${${inSync} ? "${IN_SYNC}" : (timestamp() == "never" ? "never" : "${IN_SYNC}")}`,
      },
      stackRead.ticket,
    );

    // Attributes of a token in sync are known at plan time; see attributeExpression.
    const stack = TerraformStack.of(this);
    const attributeExpression = (field: string) => stackRead.attributeExpression(key, field);
    this.idExpression = attributeExpression(StackReadResultField.ID);
    TokenRoster.of(this).add(this, {
      name,
      // An expression's text cannot be nested in the roster's; its value is the `given` local's item, which refers
      // to no token's write: a full apply creates the roster whatever becomes of them (see tokenWriteKind).
      nameExpression: given?.("n") ?? "",
      previousNames,
      envPrefix,
      lookupErrors: stackRead.lookupErrors,
    });
    // Numbers: an empty text (a token gone, seen by a refresh-only plan) becomes null, not a failed tonumber("").
    this.attribute = (field, wrap) => {
      const value = attributeExpression(field);
      return ref(wrap === "tonumber" ? `tonumber(one(compact([${value}])))` : `${wrap}(${value})`, stack);
    };
  }

  /**
   * What `dependsOn: [token]` waits for: its account's writes in this stack and the read after them
   * (the stack's writer of the account holds every write; there is no resource per token).
   */
  public get fqn(): string {
    return StackRead.of(this).afterWriteFqn(this.node.addr);
  }

  /** The token's id. */
  public get tokenId(): string {
    return Token.asString(this.cached(StackReadResultField.ID, ""));
  }

  /**
   * The token's value. Sensitive: Terraform refuses an output built from it unless the output
   * is marked `sensitive: true`.
   */
  public get token(): string {
    if (!this.valueInState) {
      throw propError(
        this,
        "ApiToken",
        "token is not available with valueInState: false (the state does not hold the value); use this ApiToken's " +
          "ephemeralToken instead (Terraform >= 1.10), in a write-only argument, a provider configuration, a provisioner " +
          "or an ephemeral variable, or set valueInState: true",
      );
    }
    return Token.asString(this.cached(StackReadResultField.TOKEN, "sensitive"));
  }

  /**
   * The token's value as an ephemeral value (Terraform >= 1.10): read by id at each plan and
   * apply that needs it, never written to the state or a plan file, and marked sensitive.
   * Terraform accepts it only in write-only arguments (e.g. `secret_string_wo`), provider
   * configuration, provisioner and connection blocks, locals, and ephemeral variables and
   * outputs of modules; anywhere else the plan fails with Terraform's own error. Use it with
   * `valueInState: false` to keep the value out of the state altogether.
   *
   * The first use in a stack adds its one `ephemeral "local_command"` block (hashicorp/local >= 2.7,
   * declared unless the stack has its own unaliased `local` provider), which reads the values of
   * all the stack's tokens that use this in one script run, and asks for Terraform >= 1.10.0 in
   * `required_version`; a constraint the app sets itself (`stack.addOverride("terraform.required_version", ...)`)
   * replaces it, so include ">= 1.10.0" in it.
   */
  public get ephemeralToken(): string {
    if (this.ephemeral === undefined) {
      const value = StackRead.of(this).ephemeralValue(this.node.addr, this.idExpression, this.where);
      this.ephemeral = ref(value, TerraformStack.of(this));
    }
    return Token.asString(this.ephemeral);
  }

  /** Creation time as the API reports it (the spec shows neither unit nor epoch). */
  public get createdAt(): number {
    return Token.asNumber(this.cached(StackReadResultField.CREATED_AT, "tonumber"));
  }

  /** Last use as the API reports it; 0 means never used. */
  public get lastUsed(): number {
    return Token.asNumber(this.cached(StackReadResultField.LAST_USED, "tonumber"));
  }

  /** Made on first use: a reference costs a stack trace, and most stacks read one or two attributes. */
  private cached(field: string, wrap: string): IResolvable {
    let value = this.attributes.get(field);
    if (!value) {
      value = this.attribute(field, wrap);
      this.attributes.set(field, value);
    }
    return value;
  }
}

/** The props with their names and description in Unicode NFC (anything not a string left as it is, for validateProps). */
function inNfc(props: ApiTokenProps): ApiTokenProps {
  if (props === undefined || props === null) return props;
  const nfc = <T>(value: T): T => (typeof value === "string" ? (value.normalize("NFC") as T) : value);
  return {
    ...props,
    name: nfc(props.name),
    description: nfc(props.description),
    previousNames: Array.isArray(props.previousNames) ? props.previousNames.map(nfc) : props.previousNames,
  };
}

function validateProps(scope: Construct, props: ApiTokenProps): void {
  const kind = "ApiToken";
  if (props === undefined || props === null) throw propError(scope, kind, "props are required (at least a name)");
  checkTokenName(scope, kind, "name", props.name, NAME_MAX_LENGTH);
  if (isKnown(props.description) && typeof props.description !== "string") {
    throw propError(scope, kind, "description must be a string");
  }
  if (props.previousNames !== undefined) {
    if (!Array.isArray(props.previousNames)) throw propError(scope, kind, "previousNames must be a list of names");
    props.previousNames.forEach((previous, i) => checkTokenName(scope, kind, `previousNames[${i}]`, previous, NAME_MAX_LENGTH));
  }
  checkBaseUrl(scope, kind, props.baseUrl);
  if (props.valueInState !== undefined && typeof props.valueInState !== "boolean") {
    throw propError(scope, kind, "valueInState must be true or false");
  }
}
