// Go's os/exec on Unix as the external provider uses it (Go 1.23): exec.LookPath and the error
// texts of exec, os.StartProcess and syscall errnos, which reach users in "Error: ..." and
// "State: ..." lines of the provider's diagnostics.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

/** syscall.Errno.Error() for the errnos a lookup or a spawn can meet. */
const ERRNO_TEXT: Record<string, string> = {
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a directory",
  ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "file name too long",
  ENOEXEC: "exec format error",
  ETXTBSY: "text file busy",
  E2BIG: "argument list too long",
  ENOMEM: "cannot allocate memory",
};

export function goErrnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return (code && ERRNO_TEXT[code]) ?? (e instanceof Error ? e.message : String(e));
}

/** Go's %q for the strings printed here (JSON quoting agrees for ordinary text). */
export const goQuote = (s: string): string => JSON.stringify(s);

/** findExecutable: stat (following links), reject directories, require execute permission. */
function findExecutable(file: string, cwd: string): string | undefined {
  const abs = path.resolve(cwd, file);
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch (e) {
    return `stat ${file}: ${goErrnoText(e)}`;
  }
  if (isDir) return "is a directory";
  try {
    accessSync(abs, constants.X_OK);
  } catch {
    return "permission denied";
  }
  return undefined;
}

export type LookPathResult = { ok: true; path: string } | { ok: false; notFound: boolean; error: string };

/**
 * exec.LookPath. A name with a slash is checked as is; otherwise each PATH entry is tried ("" means
 * "."). Relative names and entries are checked against `cwd`, the provider's working directory.
 * A hit through a relative entry is Go's ErrDot case, which the provider accepts; the path stays
 * relative, and Go then executes it relative to the program's own directory (working_dir).
 */
export function lookPath(file: string, env: NodeJS.ProcessEnv, cwd: string): LookPathResult {
  if (file.includes("/")) {
    const err = findExecutable(file, cwd);
    return err ? { ok: false, notFound: false, error: `exec: ${goQuote(file)}: ${err}` } : { ok: true, path: file };
  }
  // filepath.SplitList: an empty PATH has no entries (not one "." entry).
  const entries = env.PATH ? env.PATH.split(path.delimiter) : [];
  for (let dir of entries) {
    if (dir === "") dir = ".";
    const candidate = path.join(dir, file);
    if (findExecutable(candidate, cwd) === undefined) return { ok: true, path: candidate };
  }
  return { ok: false, notFound: true, error: `exec: ${goQuote(file)}: executable file not found in $PATH` };
}

/**
 * What os.StartProcess reports before the child runs: a Dir that cannot be stat'ed gives
 * "chdir <dir>: ...". A Dir that is not a directory passes that check and fails in the child's
 * chdir, reported like an exec failure.
 */
export function startProcessDirError(dir: string, absDir: string, cmdPath: string): string | undefined {
  try {
    if (statSync(absDir).isDirectory()) return undefined;
    return `fork/exec ${cmdPath}: not a directory`;
  } catch (e) {
    return `chdir ${dir}: ${goErrnoText(e)}`;
  }
}
