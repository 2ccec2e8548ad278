import { errorMessage } from "../shared/error-message";
import type * as Crypto from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { GpuCloudError } from "../client/errors";
import type { Session, SessionStore } from "../client/session";
import { withFileLock } from "./name-lock";
import { writePrivateFile } from "./private-file";
import { HANDOFF_DIR } from "../protocol";
import { sha256Hex } from "./sha256";

/**
 * One login per account for the scripts of one terraform apply (issue 24): every provisioner and
 * the reads after the writes (the plan-time read keeps its own). Each is its own process, so the
 * session goes through a file in the hand-off folder, and a lock makes the scripts that start
 * together wait for the one that logs in, rather than all log in (APIs limit logins per minute).
 *
 * The file never holds the session in the clear: it is sealed (AES-256-GCM) with a key derived
 * from the password's md5, which every script of the run has from its environment and which is
 * what a login sends anyway. The derivation is scrypt with a random salt, so that whoever can read
 * the file cannot test password guesses against it quickly (a fast derivation would let them try
 * millions a second). It is bound to the run (`plantimestamp()`), the account and the user; the
 * next run's plan-time read deletes the files of other runs, and the access token inside expires
 * after 30 minutes. The store is best effort: a folder it cannot use means a login of one's own.
 */

export const SESSION_FILE_PREFIX = "session-";

/** Loaded on first use: the plan-time read, which only removes other runs' files, never loads it (see ./sha256.ts). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
const crypto = (): typeof Crypto => require("node:crypto") as typeof Crypto;
const SEAL = "aes-256-gcm";

/** scrypt's cost, paid once by each script that reads or seals the file: small for a script, large for a guesser. */
const SCRYPT = { N: 2 ** 12, r: 8, p: 1 } as const;

interface SealedSession {
  readonly run: string;
  readonly salt: string;
  readonly iv: string;
  readonly tag: string;
  readonly data: string;
}

export interface RunSessionOptions {
  /** How long a script waits for another that is logging in (its run budget). */
  readonly waitMs: number;
  /** When a lock is certainly stale (see withNameLock). */
  readonly staleAfterMs: number;
  readonly onWait: (line: string) => void;
  /** Says that the folder could not be used and this script logs in on its own. */
  readonly warn: (line: string) => void;
}

/** The store of `run`'s sessions on one account (`account`: its digest, see accountDigest). */
export function runSessionStore(cwd: string, run: string, account: string, opts: RunSessionOptions): SessionStore {
  return {
    async share(login, { username, secret, now, deadline, rejected }) {
      const identity = `${account}\n${username}\n${run}`;
      const file = path.join(cwd, HANDOFF_DIR, `${SESSION_FILE_PREFIX}${sha256Hex(identity).slice(0, 24)}.json`);
      const usable = (s: Session | undefined): s is Session => s !== undefined && now() < s.renewAt && s.accessToken !== rejected;
      const stored = unseal(file, secret, identity);
      if (usable(stored)) return { session: stored, reused: true };
      const waitMs = Math.max(0, Math.min(opts.waitMs, deadline - now()));
      let fresh: Session | undefined;
      try {
        return await withFileLock(
          `${file}.lock`,
          { cwd, waitMs, staleAfterMs: opts.staleAfterMs, onWait: opts.onWait, holder: `logging in as ${username} for this terraform run` },
          async () => {
            const meanwhile = unseal(file, secret, identity);
            if (usable(meanwhile)) return { session: meanwhile, reused: true };
            fresh = await login();
            seal(file, secret, identity, run, fresh);
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

/** The sealing key: scrypt of the credential, salted per file (see above). */
function keyOf(secret: string, salt: Buffer): Buffer {
  return crypto().scryptSync(secret, salt, 32, SCRYPT);
}

function seal(file: string, secret: string, identity: string, run: string, session: Session): void {
  const iv = crypto().randomBytes(12);
  const salt = crypto().randomBytes(16);
  const cipher = crypto().createCipheriv(SEAL, keyOf(secret, salt), iv);
  cipher.setAAD(Buffer.from(identity));
  const data = Buffer.concat([cipher.update(JSON.stringify(session), "utf8"), cipher.final()]);
  const sealed: SealedSession = {
    run,
    salt: salt.toString("base64"),
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    data: data.toString("base64"),
  };
  writePrivateFile(file, JSON.stringify(sealed));
}

/** The session in `file`, or undefined when there is none or it was sealed with another key (another password). */
function unseal(file: string, secret: string, identity: string): Session | undefined {
  try {
    const sealed = JSON.parse(readFileSync(file, "utf8")) as SealedSession;
    const key = keyOf(secret, Buffer.from(sealed.salt, "base64"));
    const decipher = crypto().createDecipheriv(SEAL, key, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(Buffer.from(identity));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]).toString("utf8");
    const session = JSON.parse(text) as Session;
    return typeof session.accessToken === "string" && typeof session.refreshToken === "string" && typeof session.renewAt === "number"
      ? session
      : undefined;
  } catch {
    return undefined;
  }
}
