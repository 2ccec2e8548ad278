import { DataResource, Lazy, TerraformStack, Token } from "cdktf";
import { Construct } from "constructs";

import { RosterEnv, type RosterNow, RuntimeCommand, TOKEN_ROSTER_ID } from "../protocol";
import { provisionerCommand } from "./runtime-script";
import { terraformLiteral } from "./terraform-literal";
import { isKnown } from "./validation";

const ROSTER_ID = "gpucloud-token-roster";

/** What the roster records of one ApiToken. */
interface RosterToken {
  readonly path: string;
  /** Its name as configured: a literal, or a cdktf token. */
  readonly name: string;
  /** Terraform expression (text) whose value is its name, for a name that is not literal. */
  readonly nameExpression: string;
  readonly envPrefix?: string;
  /** Literal name and previous names, for RosterNow.names. */
  readonly literalNames: readonly string[];
}

/**
 * The stack's list of the API tokens it manages, as one `terraform_data` whose destroy-time
 * provisioner says which tokens stay active when an ApiToken is removed or the stack destroyed
 * (Terraform runs no destroy-time provisioner of a removed block, and the writer has none).
 * `triggers_replace` = the sorted construct paths, so adding or removing an ApiToken replaces it;
 * `input` = path → name (and account) as one literal JSON string, so a rename is a small in-place
 * update, with no ids (they would leave it unknown in the plan of every new token) and cheap to
 * parse at each plan (docs/performance.md); `count` = 0 without ApiTokens.
 */
export class TokenRoster extends Construct {
  /** The stack's roster, created on first use (by any construct of the library). */
  static of(scope: Construct): TokenRoster {
    const stack = TerraformStack.of(scope);
    const existing = stack.node.tryFindChild(ROSTER_ID);
    return existing instanceof TokenRoster ? existing : new TokenRoster(stack, ROSTER_ID);
  }

  private readonly tokens: RosterToken[] = [];
  private readonly roster: DataResource;

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    const paths = () => this.tokens.map((t) => t.path).sort();
    const now = (): RosterNow => ({
      paths: paths(),
      names: [...new Set(this.tokens.flatMap((t) => t.literalNames))].sort(),
    });
    const roster = (this.roster = new DataResource(this, "roster", {
      count: Token.asNumber(Lazy.numberValue({ produce: () => (this.tokens.length > 0 ? 1 : 0) })),
      provisioners: [
        {
          type: "local-exec",
          when: "destroy",
          command: provisionerCommand(this, RuntimeCommand.TOKEN_ROSTER_RELEASE),
          environment: {
            // "null" for an input never known: a destroy must not fail on it.
            [RosterEnv.WAS]: '${coalesce(self.input, "null")}',
            // A literal of the configuration being applied (a destroy-time provisioner may refer to nothing else but self).
            [RosterEnv.NOW]: Lazy.stringValue({ produce: () => terraformLiteral(JSON.stringify(now())) }),
          },
        },
      ],
    }));
    // A fixed address a reviewer recognises in a plan: terraform_data.gpucloud_token_roster[0].
    roster.overrideLogicalId(TOKEN_ROSTER_ID);
    // A list, not the map cdktf's type declares: the plan then shows which paths came or went.
    roster.addOverride("triggers_replace", Lazy.anyValue({ produce: () => paths().map(terraformLiteral) }));
    roster.addOverride("input", Lazy.stringValue({ produce: () => rosterInput(this.tokens) }));
  }

  /**
   * Adds an ApiToken: its name and previous names as configured (literals or cdktf tokens), an
   * expression (text) whose value is its name, for a name that is not literal; `lookupErrors`, the
   * Terraform text of the stack read's lookup errors.
   */
  add(
    owner: Construct,
    token: {
      name: string;
      nameExpression: string;
      envPrefix?: string;
      previousNames: readonly string[];
      lookupErrors: string;
    },
  ): void {
    if (this.tokens.length === 0) {
      // With tokens, the stack's read reports a failing lookup in its result instead of failing, so that a
      // plan of tokens (-target) goes on; a full plan fails here, with the lookups' own message.
      this.roster.addOverride("lifecycle.precondition", [
        { condition: `\${${token.lookupErrors} == ""}`, error_message: `\${${token.lookupErrors}}` },
      ]);
    }
    this.tokens.push({
      path: owner.node.path,
      name: token.name,
      nameExpression: token.nameExpression,
      envPrefix: token.envPrefix,
      literalNames: [token.name, ...token.previousNames].filter((n) => isKnown(n)),
    });
  }
}

/** The roster's `input` (see TokenRoster): JSON text by path, with an interpolation only for a name that is not literal. */
function rosterInput(tokens: readonly RosterToken[]): string {
  const literal = (value: string) => terraformLiteral(JSON.stringify(value));
  const entries = [...tokens]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((t) => {
      const name = isKnown(t.name) ? literal(t.name) : `\${jsonencode(${t.nameExpression})}`;
      const prefix = t.envPrefix !== undefined ? `,"env_prefix":${literal(t.envPrefix)}` : "";
      return `${literal(t.path)}:{"name":${name}${prefix}}`;
    });
  return `{${entries.join(",")}}`;
}
