/**
 * Checks of request fields and query parameters (a 400 naming the field and limit) and of the
 * emulator's options (a plain Error at start).
 */
import { HttpError } from "./http";

const NAME_MAX = 50;
const DESCRIPTION_MAX = 1000;

const codePoints = (s: string): number => [...s].length;

/** Validates a token name as create and update do; throws a 400 naming the field and limit. */
export function checkName(value: unknown): string {
  if (value === undefined || value === null) throw new HttpError(400, "name is required");
  if (typeof value !== "string") throw new HttpError(400, "name must be a string");
  if (value.trim() === "") throw new HttpError(400, "name must not be empty");
  const length = codePoints(value);
  if (length > NAME_MAX) throw new HttpError(400, `name must be at most ${NAME_MAX} characters (got ${length})`);
  return value;
}

/** Validates an optional description; undefined when not given. */
export function checkDescription(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new HttpError(400, "description must be a string");
  const length = codePoints(value);
  if (length > DESCRIPTION_MAX) {
    throw new HttpError(400, `description must be at most ${DESCRIPTION_MAX} characters (got ${length})`);
  }
  return value;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw new HttpError(400, `${field} is required`);
  if (typeof value !== "string") throw new HttpError(400, `${field} must be a string`);
  return value;
}

/** Parses an optional integer query parameter with a lower bound; throws a 400 naming it. */
export function intParam(query: URLSearchParams, name: string, min: number): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new HttpError(400, `${name} must be an integer >= ${min} (got "${raw.slice(0, 40)}")`);
  }
  return Number(raw);
}

export function checkPositiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`emulator option ${name} must be an integer >= 1`);
  return value;
}
