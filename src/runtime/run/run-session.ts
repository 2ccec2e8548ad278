import { GpuCloudError } from "../../client/errors";
import type { Session, SessionStore } from "../../client/session";
import type { RunTicket } from "../../protocol";
import { errorMessage } from "../../shared/error-message";
import type { AccountRef } from "../account-identity";
import { readIfReadable, writePrivateFile } from "../io/private-file";
import { withFileLock } from "../locks/file-lock";
import { openRunFolder, runFilePath } from "./run-folder";

/**
 * One login per account for the scripts of one terraform run. Each is its own process, so the
 * session goes through a file in the run's folder (./run-folder.ts), and a lock makes the scripts
 * that start together wait for the one that logs in, rather than all log in (APIs limit logins).
 *
 * The file is a live credential: the access and refresh tokens (valid up to 2 hours) and when to
 * renew them, as plain JSON, 0600 in the run's 0700 folder, like the AWS CLI's cache of SSO tokens.
 * Nothing in it is derived from the password. It goes with the folder once the run's lease lapses.
 * Its name holds the credential's identity, so only these credentials' scripts read it, whatever
 * spelling of the username the API answers with. Best effort: a folder it cannot use costs a login.
 */

export interface RunSessionOptions {
  readonly env: NodeJS.ProcessEnv;
  /** How long a script waits for another that is logging in (its budget). */
  readonly waitMs: number;
  /** This script's lease (see leaseMs). */
  readonly leaseMs: number;
  readonly onWait: (line: string) => void;
  /** Says that the folder could not be used and this script logs in on its own. */
  readonly warn: (line: string) => void;
}

/** The store of one run's session on one account. */
export function runSessionStore(ticket: RunTicket, account: AccountRef, opts: RunSessionOptions): SessionStore {
  return {
    async share(login, { now, deadline, rejected }) {
      const usable = (s: Session | undefined): s is Session => s !== undefined && now() < s.renewAt && s.accessToken !== rejected;
      let fresh: Session | undefined;
      try {
        const folder = openRunFolder(opts.env, ticket, opts.leaseMs);
        const file = runFilePath(folder, account, "session");
        const stored = readSession(file);
        if (usable(stored)) return { session: stored, reused: true };
        return await withFileLock(
          `${file}.lock`,
          {
            cwd: folder,
            waitMs: Math.max(0, Math.min(opts.waitMs, deadline - now())),
            leaseMs: opts.leaseMs,
            onWait: opts.onWait,
            holder: `logging in as ${account.identity} for this terraform run`,
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
