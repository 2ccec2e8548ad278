import { prng } from "./crypto";
import type { EmulatorFaults } from "./types";

const DEFAULT_SEED = 1;

type Check = (value: unknown) => boolean;
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const rate: Check = (v) => isNumber(v) && v >= 0 && v <= 1;
const nonNegative: Check = (v) => isNumber(v) && v >= 0;
const nonNegativeInt: Check = (v) => Number.isInteger(v) && (v as number) >= 0;
const positiveInt: Check = (v) => Number.isInteger(v) && (v as number) >= 1;
const isBoolean: Check = (v) => typeof v === "boolean";

const RULES: Record<keyof EmulatorFaults, readonly [Check, string]> = {
  latencyMs: [nonNegative, "a number >= 0"],
  serverErrorRate: [rate, "a number between 0 and 1"],
  htmlErrorRate: [rate, "a number between 0 and 1"],
  rateLimitEvery: [positiveInt, "an integer >= 1"],
  retryAfterSeconds: [nonNegativeInt, "an integer >= 0"],
  dropConnectionRate: [rate, "a number between 0 and 1"],
  loseCreateResponses: [nonNegativeInt, "an integer >= 0"],
  serverErrorEvery: [positiveInt, "an integer >= 1"],
  serverErrorStatus: [(v) => Number.isInteger(v) && (v as number) >= 500 && (v as number) <= 599, "an integer from 500 to 599"],
  errorsAsHttp200: [isBoolean, "true or false"],
  gatewayTimeoutCreates: [nonNegativeInt, "an integer >= 0"],
  createCommitDelayMs: [nonNegative, "a number >= 0"],
  deleteOnListRequest: [positiveInt, "an integer >= 1"],
  rejectSortParams: [isBoolean, "true or false"],
  ignoreSortParams: [isBoolean, "true or false"],
  ignoreLimit: [isBoolean, "true or false"],
  defaultPageSize: [positiveInt, "an integer >= 1"],
  maxPageSize: [positiveInt, "an integer >= 1"],
  seed: [isNumber, "a finite number"],
  paths: [(v) => Array.isArray(v) && v.every((p) => typeof p === "string"), "an array of strings"],
};

/** Checks an untrusted faults object; returns an error message naming the field, or undefined. */
export function faultsError(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return "faults must be a JSON object";
  for (const [key, value] of Object.entries(input)) {
    const rule = (RULES as Record<string, readonly [Check, string]>)[key];
    if (!rule) return `unknown fault "${key}"; known: ${Object.keys(RULES).join(", ")}`;
    if (value !== undefined && !rule[0](value)) return `${key} must be ${rule[1]}`;
  }
  return undefined;
}

/** What to do with a request before it is routed. */
export type FaultAction =
  | { readonly kind: "drop" }
  | { readonly kind: "rate-limit"; readonly retryAfter: number }
  | { readonly kind: "html" }
  | { readonly kind: "server-error"; readonly status: number }
  | { readonly kind: "none" };

const SERVER_ERRORS = [500, 502, 503] as const;

/** The live fault configuration with its counters; replaced wholesale by `setFaults`. */
export class FaultState {
  readonly config: EmulatorFaults;
  private readonly random: () => number;
  private counted = 0;
  private losesLeft: number;
  private gatewayTimeoutsLeft: number;
  private listRequests = 0;

  constructor(config: EmulatorFaults) {
    const error = faultsError(config);
    if (error) throw new Error(`invalid emulator faults: ${error}`);
    this.config = { ...config, ...(config.paths ? { paths: [...config.paths] } : {}) };
    this.random = prng(config.seed ?? DEFAULT_SEED);
    this.losesLeft = config.loseCreateResponses ?? 0;
    this.gatewayTimeoutsLeft = config.gatewayTimeoutCreates ?? 0;
  }

  /** True when faults apply to a request for `path` (`/_emulator/` never reaches here). */
  applies(path: string): boolean {
    const paths = this.config.paths;
    return !paths || paths.some((p) => path.startsWith(p));
  }

  get latencyMs(): number {
    return this.config.latencyMs ?? 0;
  }

  /**
   * Decides the fate of one request to which faults apply. Order: rate limit and every-Nth 5xx
   * (deterministic counts), then dropped connection, HTML 502, JSON 5xx, each drawn from the
   * PRNG only when its rate is set, so a given seed and configuration always yield the same
   * sequence.
   */
  next(): FaultAction {
    const c = this.config;
    this.counted += 1;
    if (c.rateLimitEvery && this.counted % c.rateLimitEvery === 0) {
      return { kind: "rate-limit", retryAfter: c.retryAfterSeconds ?? 1 };
    }
    if (c.serverErrorEvery && this.counted % c.serverErrorEvery === 0) {
      return { kind: "server-error", status: c.serverErrorStatus ?? 502 };
    }
    if (c.dropConnectionRate && this.random() < c.dropConnectionRate) return { kind: "drop" };
    if (c.htmlErrorRate && this.random() < c.htmlErrorRate) return { kind: "html" };
    if (c.serverErrorRate && this.random() < c.serverErrorRate) {
      return { kind: "server-error", status: SERVER_ERRORS[Math.floor(this.random() * SERVER_ERRORS.length)] };
    }
    return { kind: "none" };
  }

  /** Consumes one 504-then-commit-later create, if any are left. */
  takeGatewayTimeoutCreate(): boolean {
    if (this.gatewayTimeoutsLeft <= 0) return false;
    this.gatewayTimeoutsLeft -= 1;
    return true;
  }

  get createCommitDelayMs(): number {
    return this.config.createCommitDelayMs ?? 3000;
  }

  /** Counts a list request that reached the API; true when it is the one to delete a token before. */
  takeListDeletion(): boolean {
    this.listRequests += 1;
    return this.config.deleteOnListRequest === this.listRequests;
  }

  /** Consumes one lost create response, if any are left. */
  takeLostCreate(): boolean {
    if (this.losesLeft <= 0) return false;
    this.losesLeft -= 1;
    return true;
  }
}
