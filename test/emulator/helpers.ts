import type { EmulatorOptions, RunningEmulator } from "../../src/emulator";
import { md5Hex, startEmulator } from "../../src/emulator";

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;

  readonly json: any;
}

export interface CallOptions {
  readonly body?: unknown;
  /** Sent as is (not JSON-encoded). */
  readonly rawBody?: string;
  readonly headers?: Record<string, string>;
}

/** One HTTP call against the emulator with fetch; parses JSON when the body is JSON. */
export async function call(emu: { url: string }, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(`${emu.url}${path}`, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  if ((res.headers.get("content-type") ?? "").startsWith("application/json")) json = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, json };
}

export interface Session {
  readonly access: string;
  readonly refresh: string;
  readonly headers: Record<string, string>;
}

export async function login(emu: RunningEmulator, username = "demo", password = "demo-password"): Promise<Session> {
  const r = await call(emu, "POST", "/authenticate/login", { body: { username, password: md5Hex(password) } });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
  const { access_token: access, refresh_token: refresh } = r.json.data;
  return { access, refresh, headers: { authorization: `Bearer ${access}`, "refresh-token": refresh } };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Starts an emulator and closes it after the current test file. */
export function useEmulator(options: EmulatorOptions = {}): { readonly emu: RunningEmulator } {
  const holder: { emu: RunningEmulator } = {} as { emu: RunningEmulator };
  beforeAll(async () => {
    holder.emu = await startEmulator(options);
  });
  afterAll(async () => {
    await holder.emu?.close();
  });
  return holder;
}

/** A controllable clock for expiry tests. */
export function fakeClock(start = Date.UTC(2025, 0, 1)): { now: () => number; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}
