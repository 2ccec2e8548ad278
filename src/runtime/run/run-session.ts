import { GpuCloudError } from "../../client/errors";
import type { Session, SessionStore } from "../../client/session";
import { errorMessage } from "../../shared/error-message";
import { readIfReadable, writePrivateFile } from "../io/private-file";
import { withFileLock } from "../locks/file-lock";
import { openRunFolder, type RunFileKey, runFilePath } from "./run-folder";

/**
 * One login per account for the scripts of one terraform run: the create halves, the reads after
 * the writes and the token-value read (the plan-time read keeps its own). Each is its own process,
 * so the session goes through a file of the run (see ./run-folder.ts), and a lock makes the scripts
 * that start together wait for the one that logs in, rather than all log in (APIs limit logins
 * per minute).
 *
 * The file holds only what expires: the access and refresh tokens and when to renew them, as
 * plain JSON, mode 0600, in the user's 0700 run folder outside the stack folder, like the AWS
 * CLI's cache of SSO tokens. Nothing in it is derived from the password, so nothing in it helps
 * to guess one. The next plan of the scope removes it, and any plan once it has expired. With an
 * API token there is no login and no file. The store is best effort: a folder it cannot use means
 * a login of one's own.
 */

export interface RunSessionOptions {
  readonly env: NodeJS.ProcessEnv;
  /** How long a script waits for another that is logging in (its run budget). */
  readonly waitMs: number;
  /** When a lock is certainly stale (see withFileLock). */
  readonly staleAfterMs: number;
  readonly onWait: (line: string) => void;
  /** Says that the folder could not be used and this script logs in on its own. */
  readonly warn: (line: string) => void;
}

/** The store of one run's session on one account (`key`). */
export function runSessionStore(key: RunFileKey, opts: RunSessionOptions): SessionStore {
  return {
    async share(login, { username, now, deadline, rejected }) {
      const usable = (s: Session | undefined): s is Session =>
        s !== undefined && s.username === username && now() < s.renewAt && s.accessToken !== rejected;
      let fresh: Session | undefined;
      try {
        const file = runFilePath(openRunFolder(opts.env), key, "session");
        const stored = readSession(file);
        if (usable(stored)) return { session: stored, reused: true };
        const waitMs = Math.max(0, Math.min(opts.waitMs, deadline - now()));
        return await withFileLock(
          `${file}.lock`,
          {
            cwd: key.cwd,
            waitMs,
            staleAfterMs: opts.staleAfterMs,
            onWait: opts.onWait,
            holder: `logging in as ${username} for this terraform run`,
          },
          async () => {
            const meanwhile = readSession(file);
            if (usable(meanwhile)) return { session: meanwhile, reused: true };
            fresh = await login();
            writePrivateFile(file, JSON.stringify(fresh));
            return { session: fresh, reused: false };
          },
        );
      } catch (err) {
        // The API's errors (the login's) are the caller's; the folder's (a lock, a file) only cost a login.
        if (err instanceof GpuCloudError) throw err;
        opts.warn(`could not share this run's login (${errorMessage(err)}); logging in for this script alone`);
        return { session: fresh ?? (await login()), reused: false };
      }
    },
  };
}

/** The session in `file`, or undefined when there is none or it cannot be understood. */
function readSession(file: string): Session | undefined {
  const text = readIfReadable(file);
  if (text === undefined) return undefined;
  try {
    const s = JSON.parse(text) as Partial<Session>;
    return typeof s.accessToken === "string" &&
      typeof s.refreshToken === "string" &&
      typeof s.username === "string" &&
      typeof s.renewAt === "number"
      ? (s as Session)
      : undefined;
  } catch {
    return undefined;
  }
}
