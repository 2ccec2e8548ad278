// A PostgreSQL server of a suite's own, for Terraform's built-in `pg` backend: real remote state
// (locks, workspaces, a fresh folder seeing another folder's state) on an offline machine.
//
// Used by Jest suites and, through startPostgres(), by scripts, so nothing here touches Jest
// globals until describeWithTerraformAndPostgres() or postgresFixture() is called.
//
//   describeWithTerraformAndPostgres("my suite", () => {
//     const fx = terraformFixture({ users: [USER] });
//     const pg = postgresFixture();
//     it("keeps its state in PostgreSQL", async () => {
//       const connStr = await pg.createDatabase("jobs");
//       const folder = fx.folder({ backend: pgBackend(connStr) }).synth(build);
//       ...
//     });
//   });
//
// Skipping and CI, as describeWithTerraform does (./suite-needs.ts): without PostgreSQL's binaries,
// root, runuser or the `postgres` user the suite is skipped with a console warning (a failing test
// instead if POSTGRES_TESTS_REQUIRED=1); when it runs, a line goes to the file POSTGRES_TESTS_MARKER
// names, so .ci/run can tell "installed, yet nothing ran".
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";

import { PgBackend, type TerraformStack } from "cdktf";

import { describeNeeding, type SuiteNeed } from "./suite-needs";
import { describeWithTerraform } from "./terraform";

// ---------------------------------------------------------------------------------------------
// Is PostgreSQL there?

export type PostgresAvailability = { ok: true; binDir: string; version: string } | { ok: false; reason: string };

const PG_ROOT = "/usr/lib/postgresql";
let availability: PostgresAvailability | undefined;

/**
 * Whether a server can be started here (cached): Debian's binaries (/usr/lib/postgresql/<v>/bin,
 * the highest version), root, runuser and the `postgres` user, as initdb refuses to run as root.
 */
export function postgresAvailable(): PostgresAvailability {
  if (availability) return availability;
  availability = probe();
  return availability;
}

function probe(): PostgresAvailability {
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter((v) => existsSync(path.join(PG_ROOT, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) return { ok: false, reason: `no ${PG_ROOT}/*/bin/initdb (apt-get install postgresql)` };
  if (process.getuid?.() !== 0) return { ok: false, reason: "not root: the server is started as the postgres user through runuser" };
  const user = spawnSync("runuser", ["-u", "postgres", "--", "true"], { encoding: "utf8", timeout: 10_000 });
  if (user.error || user.status !== 0) {
    return { ok: false, reason: `runuser -u postgres failed: ${user.error?.message ?? user.stderr.trim()}` };
  }
  const binDir = path.join(PG_ROOT, versions[0], "bin");
  const res = spawnSync(path.join(binDir, "postgres"), ["--version"], { encoding: "utf8", timeout: 10_000 });
  if (res.status !== 0) return { ok: false, reason: `${binDir}/postgres --version failed: ${res.error?.message ?? res.stderr.trim()}` };
  return { ok: true, binDir, version: res.stdout.trim() };
}

const POSTGRES_NEED: SuiteNeed = {
  what: "PostgreSQL",
  requiredEnv: "POSTGRES_TESTS_REQUIRED",
  markerEnv: "POSTGRES_TESTS_MARKER",
  available: postgresAvailable,
};

/** describeWithTerraform for suites that also need a PostgreSQL server (see describeNeeding). */
export function describeWithTerraformAndPostgres(name: string, fn: () => void): void {
  describeNeeding(POSTGRES_NEED, name, fn, describeWithTerraform);
}

// ---------------------------------------------------------------------------------------------
// The server

export interface PostgresServer {
  readonly port: number;
  /** The data directory, which also holds the server's log (server.log) and its socket. */
  readonly dataDir: string;
  /** Creates the database `name`; its connection string for Terraform's pg backend. */
  createDatabase(name: string): Promise<string>;
  /** Runs `sql` in `database` through psql; the rows, one line each, fields split by "|". */
  query(database: string, sql: string): Promise<string[]>;
  /** Stops the server (`pg_ctl stop -m fast`) and removes its data directory (unless KEEP_TF_TEST_DIRS=1). */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Times to try another port when the one picked was taken in between (default 5). */
  readonly portAttempts?: number;
  /** Picks the port of each attempt (default freePort); a test gives a taken one to see the retry. */
  readonly pickPort?: () => Promise<number>;
}

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    // The libpq variables of whoever runs the tests (PGPORT, PGSSLMODE, ...) must not redirect our tools.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PG")));
    const child = spawn(command, args, { cwd: opts.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.once("error", (e) => {
      clearTimeout(timer);
      resolve({ status: null, stdout: "", stderr: e.message });
    });
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
  });
}

/** A port nobody listens on now, from the kernel; another process may still take it before we do. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (address && typeof address === "object" ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * Where the data directory goes: os.tmpdir() if the postgres user can reach it, else its nearest
 * such ancestor. Under Jest os.tmpdir() is the run's own folder (test/support/tmp-setup.js),
 * mode 0700 and root's, which the server, running as postgres, could not enter.
 */
function dataDirBase(): string {
  for (let dir = os.tmpdir(); ; dir = path.dirname(dir)) {
    if (spawnSync("runuser", ["-u", "postgres", "--", "test", "-x", dir, "-a", "-d", dir]).status === 0) return dir;
    if (path.dirname(dir) === dir) throw new Error(`the postgres user can reach no folder above ${os.tmpdir()}`);
  }
}

/**
 * Stops the server and removes the data directory once `pid` (this process) is gone without
 * stop(): a Jest worker killed by Ctrl-C or a timeout runs no afterAll, and pg_ctl starts the
 * server in a session of its own, which outlives it.
 */
function startWatchdog(pid: number, binDir: string, dataDir: string): number | undefined {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
    'runuser -u postgres -- "$2/pg_ctl" -D "$3" stop -m immediate >/dev/null 2>&1; rm -rf "$3"';
  const child = spawn("sh", ["-c", script, "postgres-watchdog", String(pid), binDir, dataDir], { detached: true, stdio: "ignore" });
  child.unref();
  return child.pid;
}

/**
 * Starts a PostgreSQL server as the postgres user: a fresh data directory (initdb -A trust),
 * listening on 127.0.0.1 only, on a port the kernel says is free (another on a clash: two test
 * runs on one machine pick at once), its socket in the data directory. Durability is off
 * (fsync, full_page_writes): the data dies with the suite, and a test should not wait on a disk.
 */
export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PostgresServer> {
  const pg = postgresAvailable();
  if (!pg.ok) throw new Error(`PostgreSQL cannot be started here: ${pg.reason}`);
  const bin = (tool: string) => path.join(pg.binDir, tool);
  const dataDir = mkdtempSync(path.join(dataDirBase(), "gpucloud-pg-"));
  const log = path.join(dataDir, "server.log");
  const postgresUid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
  const postgresGid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
  chownSync(dataDir, postgresUid, postgresGid);
  const asPostgres = (tool: string, args: string[]) => run("runuser", ["-u", "postgres", "--", bin(tool), ...args], { cwd: dataDir });
  const watchdog = startWatchdog(process.pid, pg.binDir, dataDir);
  let started = false;
  const stopAndRemove = async (check: boolean): Promise<void> => {
    const stopped = started ? await asPostgres("pg_ctl", ["-D", dataDir, "stop", "-m", "fast", "-w"]) : undefined;
    if (watchdog) {
      try {
        process.kill(watchdog);
      } catch {
        // Already gone: nothing left to stop.
      }
    }
    if (process.env.KEEP_TF_TEST_DIRS === "1") console.warn(`Keeping the PostgreSQL data directory ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
    if (check && stopped && stopped.status !== 0) throw new Error(`pg_ctl stop exited with ${stopped.status}: ${stopped.stderr}`);
  };

  const serverLog = (): string => (existsSync(log) ? readFileSync(log, "utf8") : "");
  const fail = async (what: string, res: Ran): Promise<never> => {
    const logged = serverLog();
    await stopAndRemove(false);
    throw new Error(`${what} exited with ${res.status}:\n${res.stderr}${res.stdout}${logged && `--- server.log ---\n${logged}`}`);
  };
  const init = await asPostgres("initdb", ["-D", dataDir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]);
  if (init.status !== 0) return fail("initdb", init);

  const attempts = opts.portAttempts ?? 5;
  let port = 0;
  for (let attempt = 1; !started; attempt++) {
    port = await (opts.pickPort ?? freePort)();
    const settings = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${dataDir}`,
      "-c fsync=off",
      "-c full_page_writes=off",
      "-c synchronous_commit=off",
    ];
    // A fresh log for each attempt, so that a bind failure read below is this attempt's.
    rmSync(log, { force: true });
    const res = await asPostgres("pg_ctl", ["-D", dataDir, "-l", log, "-w", "-t", "60", "-o", settings.join(" "), "start"]);
    if (res.status === 0) started = true;
    // The server logs a bind failure and exits; pg_ctl only says it could not start.
    else if (attempt < attempts && /Address already in use/.test(serverLog())) continue;
    else return fail(`pg_ctl start (port ${port}, attempt ${attempt})`, res);
  }

  const psql = async (database: string, sql: string): Promise<string[]> => {
    const connect = ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database];
    const res = await run(bin("psql"), ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", ...connect, "-c", sql]);
    if (res.status !== 0) throw new Error(`psql -c ${JSON.stringify(sql)} exited with ${res.status}: ${res.stderr}`);
    return res.stdout.split("\n").filter((line) => line !== "");
  };

  return {
    port,
    dataDir,
    createDatabase: async (name) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`createDatabase: ${JSON.stringify(name)} is not a plain lower-case name`);
      await psql("postgres", `CREATE DATABASE ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}?sslmode=disable`;
    },
    query: psql,
    stop: () => stopAndRemove(true),
  };
}

// ---------------------------------------------------------------------------------------------
// The fixture and the backend

export interface PostgresFixture {
  /** The server (from beforeAll on). */
  readonly server: PostgresServer;
  /** A new database on the suite's server; its connection string. */
  createDatabase(name: string): Promise<string>;
  /** psql's rows of `sql` in `database` (see PostgresServer.query). */
  query(database: string, sql: string): Promise<string[]>;
}

/**
 * Call at the top of a describeWithTerraformAndPostgres body: registers the beforeAll that
 * starts the suite's server and the afterAll that stops it and removes its data directory,
 * whether the tests passed or not.
 */
export function postgresFixture(opts: StartPostgresOptions = {}): PostgresFixture {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres(opts);
  });
  afterAll(async () => {
    await server?.stop();
  });
  const fixture: PostgresFixture = {
    get server(): PostgresServer {
      if (!server) throw new Error("postgresFixture: the server is there from beforeAll on");
      return server;
    },
    createDatabase: (name) => fixture.server.createDatabase(name),
    query: (database, sql) => fixture.server.query(database, sql),
  };
  return fixture;
}

/**
 * The `backend` of a SynthFolder whose state lives in PostgreSQL: `new PgBackend(stack, { connStr })`,
 * cdktf's class (cdktn's under jest.cdktn.config.js). The connection string goes into cdk.tf.json
 * rather than PG_CONN_STR, so every terraform started in the folder (by a test, by a script that
 * Terraform runs, by hand) reaches the same state without a variable to pass on; it holds no
 * secret (trust, on 127.0.0.1).
 */
export function pgBackend(connStr: string): (stack: TerraformStack) => void {
  return (stack) => {
    new PgBackend(stack, { connStr });
  };
}
