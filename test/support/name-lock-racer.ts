// One contender for a name lock, run as its own process by test/runtime/name-lock.test.ts: it
// starts at an agreed moment, takes the lock (breaking a stale one), holds it a while, and logs
// when it held it.
import { appendFileSync } from "node:fs";

import { withNameLock } from "../../src/runtime/locks/name-lock";

const [cwd, apiUrl, name, startAtText, holdMsText, log] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();

async function race(): Promise<void> {
  while (Date.now() < Number(startAtText)) {
    // spin: every contender leaves the mark at the same moment
  }
  await withNameLock({ cwd, apiUrl, name, waitMs: 30_000, leaseMs: 600_000, onWait: () => undefined }, async () => {
    const entered = now();
    await new Promise((resolve) => setTimeout(resolve, Number(holdMsText)));
    appendFileSync(log, `${process.pid} ${entered} ${now()}\n`);
  });
}

race().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
