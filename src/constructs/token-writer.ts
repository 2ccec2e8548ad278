import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { Resource } from "@cdktf/provider-null/lib/resource";
import { Aspects, AssetType, Lazy, TerraformAsset, TerraformStack } from "cdktf";
import { Construct } from "constructs";

import {
  DEFAULT_ENV_PREFIX,
  RuntimeCommand,
  TOKEN_WRITER_ID,
  WRITER_CHUNK_TOKENS,
  WriterAccountTrigger,
  WriterEnv,
  type WriterInputs,
  WriterTrigger,
  writerTriggerKey,
} from "../protocol";
import { provisionerCommand } from "./runtime-script";
import { terraformLiteral } from "./terraform-literal";
import { isKnown } from "./validation";

/** Where a writer writes: the account's variable prefix (undefined: the default account) and base URL as configured. */
export interface WriterAccount {
  readonly envPrefix?: string;
  readonly baseUrl?: string;
}

/** One ApiToken as its account's writer holds it. */
export interface WriterToken {
  /** The construct path: the key of its triggers and of its entry in the writer's inputs. */
  readonly path: string;
  /** As configured: a literal, or a cdktf token. */
  readonly name: string;
  /** Undefined when not managed. */
  readonly description?: string;
  /** Terraform expression (text): the plan-time read's id. */
  readonly idExpression: string;
  /**
   * Terraform expressions (text) of the props as configured, for a token whose name, description or a
   * previous name is an expression (see StackRead.givenProps): the plan-time read was not given
   * them, and without a planned id the writer resolves it by name, then by previous name.
   */
  readonly given?: { readonly name: string; readonly description: string; readonly previousNames: string };
  /** Terraform expression (text) that is "true" while the plan-time read found the token as configured. */
  readonly inSyncExpression: string;
}

/**
 * The stack's token writer of one account: one `null_resource` whose triggers hold, per ApiToken,
 * its name, its managed description and a drift marker under `<construct path>.<field>`, so that
 * the plan names the token and the field of every change (`~ "app/ci.description" = "a" -> "b"`)
 * and hides the others; any change replaces it, and its one create-time provisioner makes every
 * write of the apply on that account in one process (runtime/writer). The ids the plan found and
 * the values only Terraform knows reach it through its environment, the literal names and
 * descriptions through a file of the stack (WriterEnv), since one environment string holds at most
 * 128 KiB. Created by the first ApiToken of an account in a stack, found again by its id.
 */
export class TokenWriter extends Construct {
  /** The writer of `account` in the stack of `scope`, created on first use. */
  static of(scope: Construct, account: WriterAccount): TokenWriter {
    const stack = TerraformStack.of(scope);
    const id = writerConstructId(account);
    const existing = stack.node.tryFindChild(id);
    return existing instanceof TokenWriter ? existing : new TokenWriter(stack, id, account);
  }

  readonly resource: Resource;
  private readonly tokens: WriterToken[] = [];
  private inputs?: TerraformAsset;
  /** The Terraform expression (text) of the plan's ticket (see StackRead.ticket). */
  private ticket = "";

  private constructor(scope: Construct, id: string, account: WriterAccount) {
    super(scope, id);
    const environment: Record<string, string> = {
      [WriterEnv.INPUTS]: Lazy.stringValue({ produce: () => this.inputsAsset().path }),
    };
    if (account.envPrefix !== undefined) environment[WriterEnv.ENV_PREFIX] = account.envPrefix;
    if (account.baseUrl !== undefined) environment[WriterEnv.BASE_URL] = terraformLiteral(account.baseUrl);
    this.resource = new Resource(this, "writer", {
      triggers: Lazy.anyValue({ produce: () => this.triggers(account) }) as unknown as Record<string, string>,
      provisioners: [
        {
          type: "local-exec",
          command: provisionerCommand(this, RuntimeCommand.TOKEN_WRITER),
          environment: Lazy.anyValue({ produce: () => ({ ...environment, ...this.plannedEnv() }) }) as unknown as Record<string, string>,
        },
      ],
    });
    this.resource.overrideLogicalId(writerLogicalId(account));
    // The file is written once every ApiToken has joined: cdktf runs aspects before it synthesizes.
    Aspects.of(this).add({ visit: (node) => void (node === this && this.inputsAsset()) });
  }

  /** Adds an ApiToken of this writer's account; `ticket` is the Terraform expression (text) of the plan's ticket. */
  add(token: WriterToken, ticket: string): void {
    if (this.inputs !== undefined) {
      throw new Error(
        `cdktf-gpucloud: the ApiToken ${token.path} was added while its stack was being synthesized; create it before app.synth()`,
      );
    }
    if (this.tokens.length === 0) this.ticket = ticket;
    this.tokens.push(token);
  }

  /** The address of the writer, for `depends_on`. */
  get address(): string {
    return `null_resource.${this.resource.friendlyUniqueId}`;
  }

  private triggers(account: WriterAccount): Record<string, string> {
    const triggers: Record<string, string> = {};
    if (account.envPrefix !== undefined) triggers[WriterAccountTrigger.ENV_PREFIX] = account.envPrefix;
    if (account.baseUrl !== undefined) triggers[WriterAccountTrigger.BASE_URL] = terraformLiteral(account.baseUrl);
    for (const t of this.tokens) {
      triggers[writerTriggerKey(t.path, WriterTrigger.NAME)] = terraformLiteral(t.name);
      if (t.description !== undefined) triggers[writerTriggerKey(t.path, WriterTrigger.DESCRIPTION)] = terraformLiteral(t.description);
      triggers[writerTriggerKey(t.path, WriterTrigger.IN_SYNC)] = t.inSyncExpression;
    }
    return triggers;
  }

  /**
   * The plan's part of the inputs, WRITER_CHUNK_TOKENS tokens per variable: each token's planned id,
   * its name or description where they are expressions, and the previous names of a token the
   * plan-time read knew by its ledger entry (WriterPlanned).
   */
  private plannedEnv(): Record<string, string> {
    const env: Record<string, string> = { [WriterEnv.TICKET]: `\${${this.ticket}}` };
    for (let i = 0; i * WRITER_CHUNK_TOKENS < this.tokens.length; i++) {
      const items = this.tokens.slice(i * WRITER_CHUNK_TOKENS, (i + 1) * WRITER_CHUNK_TOKENS).map((t) => {
        const fields = [`i = ${t.idExpression}`];
        if (t.given !== undefined) {
          if (!isKnown(t.name)) fields.push(`n = ${t.given.name}`);
          if (t.description !== undefined && !isKnown(t.description)) fields.push(`d = ${t.given.description}`);
          fields.push(`p = ${t.given.previousNames}`);
        }
        return `${JSON.stringify(terraformLiteral(t.path))} = {${fields.join(", ")}}`;
      });
      env[`${WriterEnv.PLANNED_PREFIX}${i}`] = `\${jsonencode({${items.join(", ")}})}`;
    }
    return env;
  }

  /** The stack's file of literal inputs (WriterInputs), made on first use, once every ApiToken has joined. */
  private inputsAsset(): TerraformAsset {
    if (this.inputs !== undefined) return this.inputs;
    const inputs: WriterInputs = {
      v: 1,
      tokens: Object.fromEntries(
        this.tokens.map((t) => [
          // In NFC as the plan's keys, which pass through Terraform (a construct id may hold any character).
          t.path.normalize("NFC"),
          [isKnown(t.name) ? t.name : "", t.description !== undefined && isKnown(t.description) ? t.description : null] as const,
        ]),
      ),
    };
    // cdktf copies an asset from a file at synthesis; this one lives until the process ends.
    const folder = mkdtempSync(path.join(os.tmpdir(), "gpucloud-writer-"));
    removeAtExit(folder);
    const file = path.join(folder, "writer-inputs.json");
    writeFileSync(file, JSON.stringify(inputs));
    this.inputs = new TerraformAsset(this, "inputs", { path: file, type: AssetType.FILE });
    return this.inputs;
  }
}

/**
 * The inputs files' folders of this process, removed when it exits: one listener for all of them, since
 * Node warns of a leak from the 11th listener of an event (an app of 11 stacks and accounts).
 */
const inputFolders: string[] = [];

function removeAtExit(folder: string): void {
  if (inputFolders.length === 0) {
    process.once("exit", () => {
      for (const f of inputFolders) rmSync(f, { recursive: true, force: true });
    });
  }
  inputFolders.push(folder);
}

const digest = (text: string, length: number) => createHash("sha256").update(text).digest("hex").slice(0, length);

/** The writer's construct id in its stack: one per account (prefix and base URL as configured). */
function writerConstructId(account: WriterAccount): string {
  return `gpucloud-token-writer-${digest(`${account.envPrefix ?? DEFAULT_ENV_PREFIX}\n${account.baseUrl ?? ""}`, 12)}`;
}

/**
 * The writer's Terraform name, which plans show: `gpucloud_token_writer` for the default account,
 * with the account's prefix (`gpucloud_token_writer_gpucloud_prod`) for another, and a digest of its
 * base URL where the construct gives one. Only the prefix's last "_" is cut (every prefix ends with
 * one): "PROD_" and "PROD__" are two accounts, and two writers of one name would merge into one resource.
 */
function writerLogicalId(account: WriterAccount): string {
  const prefix = account.envPrefix === undefined ? "" : `_${account.envPrefix.toLowerCase().replace(/_$/, "")}`;
  const url = account.baseUrl === undefined ? "" : `_${digest(account.baseUrl, 8)}`;
  return `${TOKEN_WRITER_ID}${prefix}${url}`;
}
