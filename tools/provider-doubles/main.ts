// Entry point (bundled to build/tools/provider-doubles.js): serves the hashicorp/null,
// hashicorp/external and hashicorp/local doubles from this one process, each on its own unix socket, and prints
// the TF_REATTACH_PROVIDERS value as a single JSON line on stdout.
//
//   node build/tools/provider-doubles.js [--keep-alive]
//
// The process exits on SIGTERM/SIGINT, or when its stdin closes, so that it dies with the
// process that started it (test harness, demo). Pass --keep-alive to ignore stdin (e.g. when
// started in the background from a shell, whose stdin is /dev/null).
// PROVIDER_DOUBLES_DEBUG=1 logs every RPC to stderr.
//
// Sessions. A real provider process is started by Terraform, so it shares Terraform's working
// directory and environment, and the external data source relies on both (a relative
// `working_dir`, `${path.module}/script`, or an asset path are relative to the stack folder).
// The first line printed serves programs from this process's cwd and environment. To serve
// several stack folders from one process, write a line {"cwd": "/abs/dir", "env": {...}} to
// stdin: the answer is one more stdout line, the reattach map of a new set of sockets whose
// external and local doubles run programs there and with that environment (this process's if omitted),
// or {"error": "..."}. Requests are answered in order.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { type ExternalContext, externalProvider } from "./external-provider";
import { localProvider } from "./local-provider";
import { nullProvider } from "./null-provider";
import { type RunningProvider, serveProvider } from "./server";

const debug = process.env.PROVIDER_DOUBLES_DEBUG === "1";
const log = (msg: string): void => {
  if (debug) process.stderr.write(`[provider-doubles ${process.pid}] ${msg}\n`);
};

interface ReattachConfig {
  Protocol: "grpc";
  ProtocolVersion: 5;
  Pid: number;
  Test: boolean;
  Addr: { Network: "unix"; String: string };
}

type ReattachMap = Record<string, ReattachConfig>;

// Unix socket paths are limited to ~104 bytes; a deep $TMPDIR could exceed that.
function socketDir(): string {
  const base = os.tmpdir().length < 60 ? os.tmpdir() : "/tmp";
  return mkdtempSync(path.join(base, "tf-doubles-"));
}

async function main(): Promise<void> {
  const keepAlive = process.argv.includes("--keep-alive");
  const dir = socketDir();
  const running: RunningProvider[] = [];
  let sessions = 0;
  let stopping = false;

  const cleanup = (): void => {
    for (const r of running) {
      r.abortAll("provider doubles shutting down");
      r.server.forceShutdown();
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const shutdown = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log(`shutting down (${why})`);
    if (debug) {
      const totals = new Map<string, number>();
      for (const r of running) for (const [rpc, n] of r.calls) totals.set(rpc, (totals.get(rpc) ?? 0) + n);
      log(`RPCs served: ${[...totals].map(([rpc, n]) => `${rpc}×${n}`).join(" ")}`);
    }
    cleanup();
    process.exit(0);
  };
  // Last resort for paths that skip shutdown(): still remove the sockets.
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  // Before anything is printed: the parent may signal us as soon as it reads the first line.
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));

  // One socket per provider per session; all served by this process.
  async function openSession(run: ExternalContext): Promise<ReattachMap> {
    const id = sessions++;
    const reattach: ReattachMap = {};
    for (const double of [nullProvider(), externalProvider(run), localProvider(run)]) {
      const socket = path.join(dir, `${double.name}-${id}.sock`);
      running.push(await serveProvider(double, socket, { log }));
      reattach[double.address] = {
        Protocol: "grpc",
        ProtocolVersion: 5,
        Pid: process.pid,
        // With Test=true Terraform never tries to kill the process it did not start.
        Test: true,
        Addr: { Network: "unix", String: socket },
      };
      log(`session ${id}: ${double.address} on ${socket} (programs run in ${run.cwd})`);
    }
    return reattach;
  }

  async function answer(line: string): Promise<string> {
    try {
      const req = JSON.parse(line) as { cwd?: unknown; env?: unknown };
      const cwd = typeof req.cwd === "string" ? path.resolve(req.cwd) : process.cwd();
      if (!statSync(cwd).isDirectory()) throw new Error(`${cwd} is not a directory`);
      const env = typeof req.env === "object" && req.env !== null ? (req.env as NodeJS.ProcessEnv) : process.env;
      return JSON.stringify(await openSession({ cwd, env }));
    } catch (e) {
      return JSON.stringify({ error: e instanceof Error ? e.message : String(e) });
    }
  }

  try {
    const first = await openSession({ cwd: process.cwd(), env: process.env });
    process.stdout.write(`${JSON.stringify(first)}\n`);
  } catch (e) {
    cleanup();
    throw e;
  }

  process.stdin.on("error", () => (keepAlive ? undefined : shutdown("stdin error")));
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  // Answer strictly in order, even though opening a session is asynchronous.
  let queue = Promise.resolve();
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    queue = queue.then(async () => {
      process.stdout.write(`${await answer(line)}\n`);
    });
  });
  lines.on("close", () => (keepAlive ? undefined : void queue.then(() => shutdown("stdin closed"))));
}

main().catch((e: unknown) => {
  process.stderr.write(`provider-doubles: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
