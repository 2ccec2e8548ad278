import { Lazy, TerraformLocal } from "cdktf";
import { type Construct } from "constructs";

import type { StackReadToken } from "../protocol";
import { terraformLiteral } from "./terraform-literal";
import { isKnown } from "./validation";

/** One token's props as the `given` local holds them: `n` name, `d` description (null when not managed), `p` previous names. */
interface GivenFields {
  readonly n: string;
  readonly d: string | null;
  readonly p: string[];
}

export type GivenField = keyof GivenFields;

const isComputed = (value: string | undefined): boolean => value !== undefined && !isKnown(value);

/**
 * Whether the plan-time read knows a token by its ledger entry alone (StackReadQueryField.BY_LEDGER): its
 * name or a previous name is a Terraform expression, which may be unknown at plan.
 */
export function isKnownByLedger(entry: StackReadToken): boolean {
  return isComputed(entry.name) || entry.previousNames.some(isComputed);
}

/**
 * Whether some of a token's props are expressions the plan-time read is not given: its names (see
 * isKnownByLedger), or its description alone, which leaves the token found by name (the ledger's digest of
 * the description tells drift).
 */
export function hasGivenProps(entry: StackReadToken): boolean {
  return isKnownByLedger(entry) || isComputed(entry.description);
}

/**
 * The props, as configured, of a stack's tokens with props the plan-time read is not given (see
 * hasGivenProps), by construct path, in one local (`given`): their expressions are written once, there, and
 * the writer, the roster and the ledger output read them from it. Made by the stack's first such token.
 */
export class GivenProps {
  private readonly props: Record<string, GivenFields> = {};
  private readonly local: TerraformLocal;
  /** The stack's ledgers' tokens merged once, for the look-ups by path of ledgerTokens(). */
  private readonly merged: TerraformLocal;

  /** `mergedLedgerTokens`: the Terraform expression (text) of the merged ledgers' tokens, path → entry. */
  constructor(scope: Construct, mergedLedgerTokens: string) {
    const value = Lazy.anyValue({
      produce: () =>
        Object.fromEntries(
          Object.entries(this.props).map(([path, g]) => [
            terraformLiteral(path),
            { n: terraformLiteral(g.n), d: g.d === null ? null : terraformLiteral(g.d), p: g.p.map(terraformLiteral) },
          ]),
        ),
    });
    this.merged = new TerraformLocal(scope, "ledger-tokens", `\${${mergedLedgerTokens}}`);
    this.local = new TerraformLocal(scope, "given", value);
  }

  add(path: string, entry: StackReadToken): void {
    this.props[path] = { n: entry.name, d: entry.description ?? null, p: [...entry.previousNames] };
  }

  has(path: string): boolean {
    return this.props[path] !== undefined;
  }

  /** The Terraform expression (text) of one of the token's props at `path`. */
  expression(path: string, field: GivenField): string {
    if (!this.has(path)) throw new Error(`cdktf-gpucloud: ${path} has no props given as expressions`);
    return `local.${this.local.friendlyUniqueId}[${JSON.stringify(terraformLiteral(path))}].${field}`;
  }

  /**
   * The ledger's tokens (Terraform text) with, for each token here, the name and description digest it is
   * given (descriptionDigest's: 16 hex of sha-256; try: "" where the description is not managed), which
   * its plan-time read did not know.
   */
  ledgerTokens(): string {
    const merged = `local.${this.merged.friendlyUniqueId}`;
    return (
      `merge(${merged}, {for p, g in local.${this.local.friendlyUniqueId} : ` +
      `p => [g.n, ${merged}[p][1], ${merged}[p][2], try(substr(sha256(g.d), 0, 16), "")] if contains(keys(${merged}), p)})`
    );
  }
}
