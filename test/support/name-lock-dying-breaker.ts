// A waiter for a name lock, run as its own process by test/runtime/name-lock.test.ts, that dies
// while breaking a stale lock: after taking the break marker, before deleting the lock (as a
// waiter killed by its watchdog or by Ctrl-C at that moment would), leaving both behind.
import type * as FsModule from "node:fs";

import { nameLockPath, withNameLock } from "../../src/runtime/locks/name-lock";

const [cwd, apiUrl, name] = process.argv.slice(2);
const lock = nameLockPath(cwd, apiUrl, name);
// The module object itself (not an import namespace), so that the lock's module sees the change.
const fs = require("node:fs") as typeof FsModule;
const realRm = fs.rmSync;
fs.rmSync = (target, options) => {
  if (String(target) === lock) process.exit(9);
  return realRm(target, options);
};

withNameLock({ cwd, apiUrl, name, waitMs: 5_000, leaseMs: 600_000, onWait: () => undefined }, async () => undefined).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
