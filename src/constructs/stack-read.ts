import { DataExternal } from "@cdktf/provider-external/lib/data-external";
import { Aspects, Lazy, TerraformLocal, TerraformOutput, TerraformResource, TerraformStack, Token } from "cdktf";
import { Construct } from "constructs";

import {
  LEDGER_OUTPUT,
  LEDGER_VERSION,
  type LookupKindName,
  RuntimeCommand,
  STACK_READ_AFTER_WRITE,
  STACK_READ_LEDGER,
  STACK_READ_LOOKUP_ERRORS,
  STACK_READ_NEW_SLOTS,
  STACK_READ_TICKET,
  STACK_READ_WARNINGS,
  STACK_READ_WORKSPACE,
  stackReadKey,
  StackReadQueryField,
  StackReadResultField,
  type StackReadToken,
  TOKEN_WRITE_ID_PREFIX,
  TokenValueField,
} from "../protocol";
import { claimTokenNames } from "./app-name-claims";
import { ephemeralLocalCommand } from "./ephemeral-command";
import { type GivenField, GivenProps, hasGivenProps, isKnownByLedger } from "./given-props";
import { externalProgram, runtimeScriptPath } from "./runtime-script";
import { terraformLiteral } from "./terraform-literal";
import { requireTerraformVersion } from "./terraform-version";
import { TokenRoster } from "./token-roster";
import { type TokenWriter } from "./token-writer";
import { isKnown } from "./validation";

/** The read's construct id: the prefix of its Terraform names (data sources, locals). */
const STACK_READ_ID = "gpucloud-stack-read";

/** The read after the writes of one account's writer. */
interface AfterWriteGroup {
  readonly data: DataExternal;
  /** Each token's attributes (token key → result map), from the plan-time read or from this read (see attributeAddress). */
  readonly attributes: TerraformLocal;
  /** The group's part of the stack's query, and the after-write marker. */
  readonly query: Record<string, string>;
  /** The slots (see stackReadKey) of the group's tokens. */
  readonly slots: string[];
}

/**
 * The one plan-time read of a stack: a single `data "external"` whose program logs in once per
 * account and base URL, walks the token list once there, reads the flavor catalog once there,
 * and returns the observation and attributes of the stack's managed tokens only and the answer
 * of each of its lookups (Flavors, FlavorPreference) whose query is literal. Created by the first
 * ApiToken or lookup of a stack and found again as the stack's child by its id (a lookup by
 * name), so synthesis stays linear in the number of constructs and a steady plan runs one script
 * process, whatever their number.
 */
export class StackRead extends Construct {
  /** The stack's read, created on first use. */
  static of(scope: Construct): StackRead {
    const stack = TerraformStack.of(scope);
    const existing = stack.node.tryFindChild(STACK_READ_ID);
    return existing instanceof StackRead ? existing : new StackRead(stack, STACK_READ_ID);
  }

  readonly data: DataExternal;
  /**
   * The plan-time read's result, as a local value that every token's expressions read. Terraform
   * decodes a data source's whole result from its working state for each expression that refers
   * to it; a local is evaluated once and kept decoded (figures: docs/performance.md).
   */
  private readonly observed: TerraformLocal;
  /**
   * Per account writer, the query of its tokens, read again after its writes: each read depends on
   * its writer only, and has an instance only while the plan-time read has no id for one of its
   * tokens, so a steady plan runs one script for the whole stack, and an apply one per account
   * with a create.
   */
  private readonly groups: AfterWriteGroup[] = [];
  private readonly groupOfWriter = new Map<TokenWriter, AfterWriteGroup>();
  /** Each group's read after the writes, for the ledger output's depends_on (see addLedgerOutput). */
  private readonly afterWriteReads: DataExternal[] = [];
  /** The writers' resources (see nameClashes and addLedgerOutput). */
  private readonly writes = new Set<TerraformResource>();
  /** Token key → its group. */
  private readonly groupOf = new Map<string, AfterWriteGroup>();
  /** Token key → its slot in the query and the results: `t0`, `t1`, ... (see stackReadKey). */
  private readonly slotOf = new Map<string, string>();
  /** The workspace lets the script find what this folder last applied (see addWarningsCheck). */
  private readonly query: Record<string, string> = { [STACK_READ_WORKSPACE]: "${terraform.workspace}" };
  /** Some token's base URL is a Terraform expression (possibly unknown until apply): the read waits for it then. */
  private queryHasComputedValues = false;
  /** The props the plan-time read is not given (see GivenProps); made by the stack's first token with such props. */
  private given?: GivenProps;
  /** The Terraform text of the merged ledgers' tokens (see addLedgerOutput), for the `given` props' look-ups. */
  private mergedLedgerTokens = "";
  /** The literal lookups' part of the query (see addLookup). */
  private readonly lookupQuery: Record<string, string> = {};
  /** Every lookup's result, from the stack's read or the lookups' own read (see addLookup); made by the first lookup. */
  private lookupResults?: TerraformLocal;
  /** The `token-value` query's fields, as Terraform object items (`"<key>.id" = <expression>`). */
  private readonly valueQuery: string[] = [];
  /** The Terraform address of the stack's ephemeral `local_command`, once some token asked for its value. */
  private valuesAddress?: string;

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    this.data = new DataExternal(this, "read", {
      program: externalProgram(this, RuntimeCommand.STACK_READ),
      // The lookups join the read only while the tokens' query is literal (see addLookup).
      query: Lazy.anyValue({
        produce: () => ({ ...this.query, ...(this.queryHasComputedValues ? {} : this.lookupQuery) }),
      }) as unknown as Record<string, string>,
    });
    this.observed = new TerraformLocal(this, "observed", `\${data.external.${this.data.friendlyUniqueId}.result}`);
    // With any construct of the library, not only with ApiTokens: when the last ApiToken leaves a stack whose
    // lookups stay, the plan still reads the ledger and says which tokens stay active.
    this.addWarningsCheck();
    this.addLedgerOutput();
  }

  /**
   * Adds a Flavors or FlavorPreference whose query is literal (`query`: its command's query, every
   * value known at synth time); returns the Terraform address (text) of a map that holds its result
   * fields under `stackReadKey(<its construct address>, <field>)`. The stack's read answers it,
   * unless some token's query holds an expression: that read is then unknown at plan until apply,
   * and the lookup's attributes must stay known at plan, so the lookups get one read of their own
   * (decided at synthesis, once every construct is added). A lookup with an expression in its own
   * query never comes here: it would make the tokens' read, and with it their `in_sync`
   * trigger, unknown at plan.
   */
  addLookup(owner: Construct, kind: LookupKindName, query: Readonly<Record<string, string>>): string {
    const key = owner.node.addr;
    this.lookupQuery[stackReadKey(key, StackReadQueryField.LOOKUP)] = kind;
    this.lookupQuery[stackReadKey(key, StackReadQueryField.PATH)] = terraformLiteral(owner.node.path);
    for (const [field, value] of Object.entries(query)) this.lookupQuery[stackReadKey(key, field)] = value;
    this.lookupResults ??= this.addLookupResults();
    return `local.${this.lookupResults.friendlyUniqueId}`;
  }

  private addLookupResults(): TerraformLocal {
    let own: DataExternal | undefined;
    // Whether some token's query holds an expression is known once every construct is added: the
    // lookups' own read is then made by an aspect (cdktf runs aspects before it synthesizes), so
    // the configuration of every other stack holds no trace of it.
    Aspects.of(this).add({
      visit: (node) => {
        if (node !== this || own !== undefined || !this.queryHasComputedValues) return;
        own = new DataExternal(this, "lookups", {
          program: externalProgram(this, RuntimeCommand.STACK_READ),
          query: { ...this.lookupQuery },
        });
      },
    });
    return new TerraformLocal(
      this,
      "lookup-results",
      Lazy.stringValue({ produce: () => (own ? `\${data.external.${own.friendlyUniqueId}.result}` : `\${${this.resultAddress}}`) }),
    );
  }

  /**
   * A `check` block that turns the plan-time read's warnings (several tokens of a managed name, a
   * name now resolving to another token) into a warning of `terraform plan` and `apply`: Terraform
   * shows nothing an external program prints when its read succeeds. Only the plan-time read: an
   * assertion over the reads after the writes is unknown at plan whenever a token is written, and
   * Terraform warns "Check block assertion known after apply" for it; what a write finds (another
   * token of the name right after a create) the next plan's read says. No class in
   * cdktf or cdktn writes check blocks, hence the override.
   */
  private addWarningsCheck(): void {
    const planned = `lookup(${this.resultAddress}, "${STACK_READ_WARNINGS}", "")`;
    // Check blocks came with Terraform 1.5: an older one would stop at "Unsupported block type".
    requireTerraformVersion(this, "1.5.0");
    TerraformStack.of(this).addOverride("check.gpucloud_api_tokens", {
      assert: [{ condition: `\${${planned} == ""}`, error_message: `\${${planned}}` }],
    });
  }

  /**
   * What `dependsOn` of a token waits for (ITerraformDependable.fqn): the read after the writes of
   * its account, which depends on the account's writer.
   */
  afterWriteFqn(key: string): string {
    return this.group(key).data.fqn;
  }

  /**
   * The Terraform expression (text) of a token's attribute: the plan-time read's value while the
   * plan-time read found the token (in sync or updated in place: known at plan), else its group's
   * read after the writes. Written once per group,
   * in the group's local, rather than once per attribute: Terraform builds a new evaluation
   * context (its whole function table included) for every expression it evaluates, and resolves
   * every reference in it, so one `for` expression per account costs less than a conditional
   * with a splat per attribute.
   */
  attributeExpression(key: string, field: string): string {
    const slot = this.slot(key);
    const group = this.group(key);
    return `local.${group.attributes.friendlyUniqueId}["${slot}"]["${stackReadKey(slot, field)}"]`;
  }

  /** The Terraform expression (text) of one field of a token in the plan-time read's query. */
  queryField(key: string, field: string): string {
    return `data.external.${this.data.friendlyUniqueId}.query["${stackReadKey(this.slot(key), field)}"]`;
  }

  /** The Terraform expression (text) of one field of a token in the plan-time read's result. */
  resultField(key: string, field: string): string {
    return `${this.resultAddress}["${stackReadKey(this.slot(key), field)}"]`;
  }

  private slot(key: string): string {
    const slot = this.slotOf.get(key);
    if (slot === undefined) throw new Error(`cdktf-gpucloud: token key ${key} is not registered with the stack's read`);
    return slot;
  }

  private group(key: string): AfterWriteGroup {
    const group = this.groupOf.get(key);
    if (!group) throw new Error(`cdktf-gpucloud: token key ${key} is not registered with the stack's read`);
    return group;
  }

  /**
   * Every consumer of a token's attribute (an output, a resource) refers to the read after the writes
   * of its account, and Terraform records each consumer's dependencies by walking everything that read
   * depends on (AttachDependenciesTransformer, at every plan): one writer, whatever the number of tokens.
   */
  private joinGroup(key: string, slot: string, writer: TokenWriter): void {
    // Whether the plan-time read found the token of slot `k` (Terraform text naming the slot): a token in sync always has its id.
    const plannedKnown = (k: string) => `${this.resultAddress}["\${${k}}.${StackReadResultField.ID}"] != ""`;
    let group = this.groupOfWriter.get(writer);
    if (!group) {
      // The run's ticket: the accounts the plan read, and where its walks ended (this read lists what is newer).
      const query: Record<string, string> = {
        [STACK_READ_WORKSPACE]: this.query[STACK_READ_WORKSPACE],
        [STACK_READ_AFTER_WRITE]: "true",
        [STACK_READ_TICKET]: `\${${this.ticket}}`,
      };
      const slots: string[] = [];
      // Terraform refuses a count unknown at plan ("Invalid count argument"). The plan-time read's result
      // is unknown at plan when its query holds a value only known at apply (a name taken from a
      // resource's attribute): then every group's read after the writes has its one instance.
      // Otherwise it has one only while some token of the group has no id yet (see plannedKnown).
      const whileIdUnknown = () => `\${alltrue([for k in ${JSON.stringify(slots)} : ${plannedKnown("k")}]) ? 0 : 1}`;
      const data = new DataExternal(this, this.groups.length === 0 ? "after-write" : `after-write-${this.groups.length + 1}`, {
        program: externalProgram(this, RuntimeCommand.STACK_READ),
        query: Lazy.anyValue({
          produce: () => ({
            ...query,
            [STACK_READ_NEW_SLOTS]: `\${join(",", [for k in ${JSON.stringify(slots)} : k if !(${plannedKnown("k")})])}`,
          }),
        }) as unknown as Record<string, string>,
        count: Token.asNumber(Lazy.anyValue({ produce: () => (this.queryHasComputedValues ? 1 : whileIdUnknown()) })),
      });
      data.dependsOn = [writer.address];
      this.writes.add(writer.resource);
      this.afterWriteReads.push(data);
      // In sync, or updated in place (the plan-time read found the token: a description change, a
      // rename with previousNames, an adopted token's change): the plan-time read's result, known at
      // plan time, since an update keeps the token's id and value (the writer refuses to end on
      // another id, see WriteDecision). Created or adopted at apply: this account's read after the
      // writes; one() of the splat is null while that read has no instance. The
      // reference to that read stays either way: consumers wait for the group's writes.
      const attributes = new TerraformLocal(
        this,
        this.groups.length === 0 ? "attributes" : `attributes-${this.groups.length + 1}`,
        Lazy.stringValue({
          produce: () =>
            `\${{for k in ${JSON.stringify(slots)} : k => ${plannedKnown("k")} ? ` +
            `${this.resultAddress} : one(data.external.${data.friendlyUniqueId}[*].result)}}`,
        }),
      );
      group = { data, attributes, query, slots };
      this.groups.push(group);
      this.groupOfWriter.set(writer, group);
    }
    group.slots.push(slot);
    this.groupOf.set(key, group);
  }

  /**
   * The root output that keeps the ledger of what this apply managed in the state (see LEDGER_OUTPUT):
   * the plan-time read's, and over it each group's read after the writes that has an instance (one()
   * of its splat is null without one, hence try).
   */
  private addLedgerOutput(): void {
    const ledgers = () => [
      `jsondecode(${this.resultAddress}["${STACK_READ_LEDGER}"])`,
      ...this.groups.map(
        (g) => `try(jsondecode(one(data.external.${g.data.friendlyUniqueId}[*].result)["${STACK_READ_LEDGER}"]), {a = {}, t = {}})`,
      ),
    ];
    const all = new TerraformLocal(this, "ledgers", Lazy.stringValue({ produce: () => `\${[${ledgers().join(", ")}]}` }));
    const tokens = `merge([for l in local.${all.friendlyUniqueId} : l.t]...)`;
    this.mergedLedgerTokens = tokens;
    const ledger = () =>
      `jsonencode({a = merge([for l in local.${all.friendlyUniqueId} : l.a]...), t = ${this.given?.ledgerTokens() ?? tokens}, v = ${LEDGER_VERSION}})`;
    // Unknown at plan while a writer is replaced (its id is), so that Terraform cannot write the plan's value: it
    // writes an output known at plan at the start of an apply whatever becomes of what it depends on, and a failed
    // or stopped rename would then leave the new name with the old id, which the next plan takes for a token
    // renamed outside Terraform, creating a second token (depends_on alone does not stop that).
    const writerIds = () => [...this.writes].map((w) => `${w.terraformResourceType}.${w.friendlyUniqueId}.id`).join(", ");
    const output = new TerraformOutput(this, "ledger", {
      description: "What the last apply of this stack managed: each ApiToken's name, id and account, read by the next plan",
      value: Lazy.stringValue({ produce: () => `\${alltrue([for id in [${writerIds()}] : id != null]) ? ${ledger()} : null}` }),
    });
    output.overrideLogicalId(LEDGER_OUTPUT);
    // Written only once every token's write succeeded: an apply that failed or was stopped keeps the ledger
    // of the last one that finished, which the next plan renames from (a read with no instance would let
    // Terraform write the plan's ledger, adoptions the failed apply never made among it). Filled as groups come.
    output.addOverride(
      "depends_on",
      Lazy.listValue({ produce: () => this.afterWriteReads.map((read) => `data.external.${read.friendlyUniqueId}`) }),
    );
    this.node.addValidation({ validate: () => this.nameClashes(output) });
  }

  /**
   * The names the next plan reads the state by are the library's alone: cdktf writes elements by
   * their logical id, so an output of the ledger's name would replace the ledger or vanish under it,
   * and a resource of the prefix of the token writes would read as one (see tokenWriteKind).
   */
  private nameClashes(ledger: TerraformOutput): string[] {
    const clashes: string[] = [];
    for (const c of TerraformStack.of(this).node.findAll()) {
      if (c instanceof TerraformOutput && c !== ledger && c.friendlyUniqueId === LEDGER_OUTPUT) {
        clashes.push(
          `cdktf-gpucloud: the output "${LEDGER_OUTPUT}" at ${c.node.path} has the name of the ledger this library keeps in ` +
            `the state (what the last apply managed, read by every plan); give that output another id`,
        );
      } else if (
        c instanceof TerraformResource &&
        ["null_resource", "terraform_data"].includes(c.terraformResourceType) &&
        c.friendlyUniqueId.startsWith(TOKEN_WRITE_ID_PREFIX) &&
        !this.writes.has(c) &&
        !(c.node.scope instanceof TokenRoster)
      ) {
        clashes.push(
          `cdktf-gpucloud: the ${c.terraformResourceType} "${c.friendlyUniqueId}" at ${c.node.path} starts with "${TOKEN_WRITE_ID_PREFIX}", ` +
            `which this library keeps for its token writes (every plan looks for them in the state); give it another id`,
        );
      }
    }
    return clashes;
  }

  /** Adds a token; throws when its name or a previous name collides with another token's of the app on the same account. */
  register(owner: Construct, entry: StackReadToken, writer: TokenWriter): void {
    claimTokenNames(owner, entry);
    if (entry.baseUrl !== undefined && !isKnown(entry.baseUrl)) this.queryHasComputedValues = true;
    const slot = `t${this.slotOf.size}`;
    this.slotOf.set(entry.key, slot);
    this.joinGroup(entry.key, slot, writer);
    const groupQuery = this.group(entry.key).query;
    const byLedger = isKnownByLedger(entry);
    const givesProps = hasGivenProps(entry);
    const ask = (field: string, value: string, planTime = true) => {
      if (planTime) this.query[stackReadKey(slot, field)] = value;
      groupQuery[stackReadKey(slot, field)] = value;
    };
    ask(StackReadQueryField.KEY, entry.key);
    // For the read's errors, which name every construct they concern.
    ask(StackReadQueryField.PATH, terraformLiteral(owner.node.path));
    if (entry.envPrefix !== undefined) ask(StackReadQueryField.ENV_PREFIX, entry.envPrefix);
    if (entry.baseUrl !== undefined) ask(StackReadQueryField.BASE_URL, terraformLiteral(entry.baseUrl));
    // Only when false: the default adds nothing to the query.
    if (!entry.valueInState) ask(StackReadQueryField.VALUE_IN_STATE, "false");
    if (entry.allowedIdentities !== undefined) ask(StackReadQueryField.PIN, terraformLiteral(JSON.stringify(entry.allowedIdentities)));
    // The names and description of a token known by its ledger entry are the reads' after the writes only (see BY_LEDGER).
    if (byLedger) this.query[stackReadKey(slot, StackReadQueryField.BY_LEDGER)] = "true";
    else if (givesProps && entry.description !== undefined) {
      this.query[stackReadKey(slot, StackReadQueryField.DESCRIPTION_AT_APPLY)] = "true";
    }
    if (givesProps) (this.given ??= new GivenProps(this, this.mergedLedgerTokens)).add(owner.node.path, entry);
    ask(StackReadQueryField.NAME, terraformLiteral(entry.name), !byLedger);
    if (entry.description !== undefined) ask(StackReadQueryField.DESCRIPTION, terraformLiteral(entry.description), !givesProps);
    entry.previousNames.forEach((previous, i) => ask(`${StackReadQueryField.PREVIOUS_PREFIX}${i}`, terraformLiteral(previous), !byLedger));
  }

  /** The props of `owner` the plan-time read is not given, as Terraform expressions (text); undefined when it is given every one. */
  givenProps(owner: Construct): ((field: GivenField) => string) | undefined {
    const given = this.given;
    const path = owner.node.path;
    return given?.has(path) ? (field) => given.expression(path, field) : undefined;
  }

  /**
   * The Terraform expression (text) of a token's value as an ephemeral value. The first call adds
   * the stack's one `ephemeral "local_command"`, which reads the values of every token that asked,
   * by id, with one script run per plan and per apply.
   */
  ephemeralValue(key: string, idExpression: string, where: { readonly baseUrl?: string; readonly envPrefix?: string }): string {
    this.valueQuery.push(`"${stackReadKey(key, TokenValueField.ID)}" = ${idExpression}`);
    if (where.baseUrl !== undefined) {
      // A literal: a quoted HCL string (JSON quoting is valid HCL; terraformLiteral escapes `${`). An expression:
      // the plan-time read's own query item, since cdktf writes a token nested in this text as bare
      // HCL (`"https://var.host"` for `https://${var.host}`), a literal URL nobody configured.
      const baseUrl = isKnown(where.baseUrl)
        ? JSON.stringify(terraformLiteral(where.baseUrl))
        : this.queryField(key, StackReadQueryField.BASE_URL);
      this.valueQuery.push(`"${stackReadKey(key, TokenValueField.BASE_URL)}" = ${baseUrl}`);
    }
    if (where.envPrefix !== undefined) {
      this.valueQuery.push(`"${stackReadKey(key, TokenValueField.ENV_PREFIX)}" = ${JSON.stringify(where.envPrefix)}`);
    }
    this.valuesAddress ??= ephemeralLocalCommand(this, "values", "gpucloud_token_values", {
      command: "node",
      arguments: [`./${runtimeScriptPath(this)}`, RuntimeCommand.TOKEN_VALUE],
      // Filled as tokens ask; cdktf reads it when it synthesizes.
      stdin: Lazy.stringValue({
        produce: () => `\${jsonencode({${this.valueQuery.join(", ")}})}`,
      }),
    });
    return `sensitive(jsondecode(${this.valuesAddress}.stdout)["${key}"])`;
  }

  /**
   * The Terraform text of the errors of the lookups this read answers ("" when none): with tokens in
   * the read, they are in its result rather than failing it (see STACK_READ_LOOKUP_ERRORS).
   */
  get lookupErrors(): string {
    return `lookup(${this.resultAddress}, "${STACK_READ_LOOKUP_ERRORS}", "")`;
  }

  /** The Terraform expression (text) of the run's ticket, which the plan-time read makes (see RunTicket). */
  get ticket(): string {
    return `${this.resultAddress}["${STACK_READ_TICKET}"]`;
  }

  /** The Terraform address of the plan-time read's result map (a local value), for expressions written as text. */
  get resultAddress(): string {
    return `local.${this.observed.friendlyUniqueId}`;
  }
}
