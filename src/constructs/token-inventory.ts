import { DataExternal } from "@cdktf/provider-external/lib/data-external";
import { Lazy, TerraformStack, Token, type TerraformResource } from "cdktf";
import { Construct } from "constructs";
import {
  DEFAULT_ENV_PREFIX,
  INVENTORY_AFTER_WRITE,
  INVENTORY_WARNINGS,
  INVENTORY_WORKSPACE,
  InventoryQueryField,
  InventoryResultField,
  RuntimeCommand,
  TokenValueField,
  inventoryKey,
} from "../runtime/protocol";
import { ephemeralLocalCommand } from "./ephemeral-command";
import { externalProgram, runtimeScriptPath } from "./runtime-script";
import { terraformLiteral } from "./terraform-literal";
import { isKnown, propError } from "./validation";

/** What one ApiToken tells the stack's inventory. */
interface InventoryEntry {
  /** The construct's address: the key of its fields in the query and the result. */
  readonly key: string;
  readonly name: string;
  /** Undefined when the description is not managed. */
  readonly description?: string;
  readonly previousNames: readonly string[];
  readonly baseUrl?: string;
  /** The account's variable prefix; undefined for the default account. */
  readonly envPrefix?: string;
  /** False: the inventory never returns the token's value. */
  readonly valueInState: boolean;
}

const INVENTORY_ID = "gpucloud-token-inventory";

/** A literal name or previous name of an ApiToken of the app. */
interface Claim {
  /** The ApiToken's construct path. */
  readonly path: string;
  readonly what: "the name" | "a previous name";
  /** As written. */
  readonly value: string;
}

/** A name as the scripts compare names (see foldTokenName in the client). */
function foldName(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * The literal names and previous names of every ApiToken of an app (keyed by the app's root
 * construct), per account: two stacks of one app that name one token on one account would both
 * adopt it, and a rename in one would rename the other's.
 */
const appClaims = new WeakMap<object, Map<string, Claim>>();

/** The account a claim is on: its prefix and its literal base URL ("" = the prefix's BASE_URL variable). */
function accountOf(entry: InventoryEntry): { readonly key: string; readonly label: string } {
  const prefix = entry.envPrefix ?? DEFAULT_ENV_PREFIX;
  const baseUrl = entry.baseUrl?.trim() ?? "";
  return {
    key: `${prefix}\n${baseUrl}`,
    label: baseUrl ? `the account ${prefix}* at ${baseUrl}` : `the account ${prefix}*`,
  };
}

/**
 * The one plan-time read of a stack's API tokens: a single `data "external"` whose program logs
 * in once and walks the token list once per account and base URL, and returns the observation and attributes
 * of the stack's managed tokens only. Created by the first ApiToken of a stack and found again
 * as the stack's child by its id (a lookup by name), so synthesis stays linear in the number of
 * tokens.
 */
export class TokenInventory extends Construct {
  /** The stack's inventory, created on first use. */
  static of(scope: Construct): TokenInventory {
    const stack = TerraformStack.of(scope);
    const existing = stack.node.tryFindChild(INVENTORY_ID);
    return existing instanceof TokenInventory ? existing : new TokenInventory(stack, INVENTORY_ID);
  }

  readonly data: DataExternal;
  /**
   * The same query, read again after the writes: depends on every token's sync resource, and
   * has an instance only while the inventory finds some token out of sync, so a steady plan
   * runs one script for the whole stack and an apply one more, whatever the number of tokens.
   */
  readonly afterWrite: DataExternal;
  /** The workspace lets the script find what this folder last applied (see addWarningsCheck). */
  private readonly query: Record<string, string> = { [INVENTORY_WORKSPACE]: "${terraform.workspace}" };
  private readonly writes: string[] = [];
  /** Literal names and previous names, to refuse two ApiTokens that would fight over one token. */
  /** Some query value is a Terraform expression (possibly unknown until apply), not a literal. */
  private queryHasComputedValues = false;
  /** The `token-value` query's fields, as Terraform object items (`"<key>.id" = <expression>`). */
  private readonly valueQuery: string[] = [];
  /** The Terraform address of the stack's ephemeral `local_command`, once some token asked for its value. */
  private valuesAddress?: string;

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    this.data = new DataExternal(this, "inventory", {
      program: externalProgram(this, RuntimeCommand.TOKEN_INVENTORY),
      query: Lazy.anyValue({ produce: () => ({ ...this.query }) }) as unknown as Record<string, string>,
    });
    const outOfSync = `[for k, v in ${this.resultAddress} : k if endswith(k, ".${InventoryResultField.IN_SYNC}") && v != "true"]`;
    // Terraform refuses a count unknown at plan ("Invalid count argument"). The inventory's result
    // is unknown at plan when its query holds a value only known at apply (a name taken from a
    // resource's attribute): then the read after the writes always has its one instance.
    const whileOutOfSync = `\${length(${outOfSync}) > 0 ? 1 : 0}`;
    this.afterWrite = new DataExternal(this, "after-write", {
      program: externalProgram(this, RuntimeCommand.TOKEN_INVENTORY),
      query: Lazy.anyValue({ produce: () => ({ ...this.query, [INVENTORY_AFTER_WRITE]: "true" }) }) as unknown as Record<string, string>,
      count: Token.asNumber(Lazy.anyValue({ produce: () => (this.queryHasComputedValues ? 1 : whileOutOfSync) })),
    });
    // Filled as tokens are added; cdktf reads it when it synthesizes.
    this.afterWrite.dependsOn = this.writes;
    this.addWarningsCheck();
  }

  /**
   * A `check` block that turns the script's warnings (several tokens of a managed name, a name
   * now resolving to another token) into a warning of `terraform plan` and `apply`: Terraform
   * shows nothing an external program prints when its read succeeds. The plan-time read speaks
   * at plan and apply; the read after the writes, at apply, says what differs from it (e.g. a
   * token of the same name that appeared during a create). No class in cdktf or cdktn writes
   * check blocks, hence the override.
   */
  private addWarningsCheck(): void {
    const planned = `lookup(${this.resultAddress}, "${INVENTORY_WARNINGS}", "")`;
    const written = `lookup(r.result, "${INVENTORY_WARNINGS}", "")`;
    const news = `[for r in ${this.afterWriteAddress} : ${written} if ${written} != "" && ${written} != ${planned}]`;
    TerraformStack.of(this).addOverride("check.gpucloud_api_tokens", {
      assert: [
        { condition: `\${${planned} == ""}`, error_message: `\${${planned}}` },
        { condition: `\${length(${news}) == 0}`, error_message: `\${join("\\n", ${news})}` },
      ],
    });
  }

  /** A token's sync resource: the read after the writes waits for it. */
  addWrite(sync: TerraformResource): void {
    this.writes.push(`${sync.terraformResourceType}.${sync.friendlyUniqueId}`);
  }

  /** The Terraform address of the read after the writes (a list: it has a count). */
  get afterWriteAddress(): string {
    return `data.external.${this.afterWrite.friendlyUniqueId}`;
  }

  /** Adds a token; throws when its name or a previous name collides with another token's of the app on the same account. */
  register(owner: Construct, entry: InventoryEntry): void {
    const kind = "ApiToken";
    const root = owner.node.root;
    let claims = appClaims.get(root);
    if (!claims) appClaims.set(root, (claims = new Map()));
    const account = accountOf(entry);
    // By the folded name: the scripts match names after trimming and case-folding too.
    const claimKey = (value: string): string => `${account.key}\n${foldName(value)}`;
    const unclaimed = (value: string, what: string): void => {
      const other = claims.get(claimKey(value));
      if (other) {
        const same = other.value === value ? "" : ` ("${other.value}" after trimming and case-folding)`;
        throw propError(
          owner,
          kind,
          `${what} "${value}" is also ${other.what}${same} of ApiToken "${other.path}": two ApiTokens of one app ` +
            `would manage the same API token (on ${account.label})`,
        );
      }
    };
    if (isKnown(entry.name)) unclaimed(entry.name, "name");
    for (const previous of entry.previousNames) {
      if (!isKnown(previous)) continue;
      if (previous === entry.name) throw propError(owner, kind, `previousNames must not contain the name itself ("${previous}")`);
      unclaimed(previous, "previous name");
    }
    const computed = (value: string | undefined) => value !== undefined && !isKnown(value);
    if (computed(entry.name) || computed(entry.description) || computed(entry.baseUrl) || entry.previousNames.some(computed)) {
      this.queryHasComputedValues = true;
    }
    const path = owner.node.path;
    if (isKnown(entry.name)) claims.set(claimKey(entry.name), { path, what: "the name", value: entry.name });
    for (const previous of entry.previousNames) {
      if (isKnown(previous)) claims.set(claimKey(previous), { path, what: "a previous name", value: previous });
    }

    if (entry.envPrefix !== undefined) this.query[inventoryKey(entry.key, InventoryQueryField.ENV_PREFIX)] = entry.envPrefix;
    this.query[inventoryKey(entry.key, InventoryQueryField.NAME)] = terraformLiteral(entry.name);
    if (entry.description !== undefined) {
      this.query[inventoryKey(entry.key, InventoryQueryField.DESCRIPTION)] = terraformLiteral(entry.description);
    }
    if (entry.baseUrl !== undefined) {
      this.query[inventoryKey(entry.key, InventoryQueryField.BASE_URL)] = terraformLiteral(entry.baseUrl);
    }
    // Only when false: the query (and so the plan) of stacks that keep the default stays as it was.
    if (!entry.valueInState) this.query[inventoryKey(entry.key, InventoryQueryField.VALUE_IN_STATE)] = "false";
    entry.previousNames.forEach((previous, i) => {
      this.query[inventoryKey(entry.key, `${InventoryQueryField.PREVIOUS_PREFIX}${i}`)] = terraformLiteral(previous);
    });
  }

  /**
   * The Terraform expression (text) of a token's value as an ephemeral value. The first call adds
   * the stack's one `ephemeral "local_command"`, which reads the values of every token that asked,
   * by id, with one script run per plan and per apply.
   */
  ephemeralValue(key: string, idExpression: string, where: { readonly baseUrl?: string; readonly envPrefix?: string }): string {
    this.valueQuery.push(`"${inventoryKey(key, TokenValueField.ID)}" = ${idExpression}`);
    if (where.baseUrl !== undefined) {
      // A quoted HCL string: JSON quoting is valid HCL, and terraformLiteral escapes `${`.
      this.valueQuery.push(`"${inventoryKey(key, TokenValueField.BASE_URL)}" = ${JSON.stringify(terraformLiteral(where.baseUrl))}`);
    }
    if (where.envPrefix !== undefined) {
      this.valueQuery.push(`"${inventoryKey(key, TokenValueField.ENV_PREFIX)}" = ${JSON.stringify(where.envPrefix)}`);
    }
    this.valuesAddress ??= ephemeralLocalCommand(this, "values", "gpucloud_token_values", {
      command: "node",
      arguments: [`./${runtimeScriptPath(this)}`, RuntimeCommand.TOKEN_VALUE],
      // Filled as tokens ask; cdktf reads it when it synthesizes.
      stdin: Lazy.stringValue({ produce: () => `\${jsonencode({${this.valueQuery.join(", ")}})}` }),
    });
    return `sensitive(jsondecode(${this.valuesAddress}.stdout)["${key}"])`;
  }

  /** The Terraform address of the inventory's result map, for expressions written as text. */
  get resultAddress(): string {
    return `data.external.${this.data.friendlyUniqueId}.result`;
  }
}
