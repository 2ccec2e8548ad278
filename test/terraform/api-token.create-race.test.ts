/**
 * Another party creates managed names while an apply runs, on a server that sorts as asked. A
 * create half decides with a read that is the last thing before its POST: no lock wait, merge or
 * file write between them. So while the run's walk is locked (as it is whenever another create
 * half records in it), no create half holds a decision it has not sent: the ones that read have
 * written, and the others read only once the lock is free, after the other party's creates, and
 * adopt. (The walk's lock once stood between the read and the POST: 1 to 3 of 30 names were then
 * created twice in each run.) The statistical race, without the held lock, is `npm run bench:faults`.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";

import { ApiToken } from "../../src";
import { runFilesIn } from "../support/run-folders";
import { describeWithTerraform } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "race-bot", password: "race-pw-2f8e" };
const NAMES = 30;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithTerraform("managed names created by another party during an apply, on a server that sorts", () => {
  let lastRequest = Date.now();
  const fx = terraformFixture({ users: [USER], emulator: { log: () => (lastRequest = Date.now()) } });

  test("a create half never waits between the read that decides and its POST: no name is created twice", async () => {
    for (let i = 0; i < 200; i++) fx.emulator.addToken({ name: `bystander-${i}`, createdAt: 1_700_000_000 + i });
    const names = Array.from({ length: NAMES }, (_, i) => `race-${i}`);
    const tmp = mkdtempSync(path.join(tmpdir(), "gpucloud-race-tmp-"));
    const tf = await fx.stack((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name })), {
      prefix: "gpucloud-race-",
      env: fx.env({ TMPDIR: tmp }),
      timeoutMs: 180_000,
    });
    const apply = (await tf.start("apply", ["-auto-approve"])).result;

    // Once the run's walk is taken, hold its lock, as a live create half of this host would.
    let lock: string | undefined;
    for (let i = 0; lock === undefined; i++) {
      if (i > 1200) throw new Error("the apply took no walk within 60 s");
      const [walk] = runFilesIn(tmp, ".walk.json");
      if (walk !== undefined && takeLock(`${walk}.lock`)) lock = `${walk}.lock`;
      else await sleep(50);
    }
    // Until every create half is stuck on the lock or done: nothing reaches the API for a while.
    while (Date.now() - lastRequest < 1_500) await sleep(100);
    const taken = new Set(fx.emulator.tokens().map((t) => t.name));
    const theirs = names.filter((n) => !taken.has(n));
    for (const name of theirs) fx.emulator.addToken({ name, description: "another party's" });
    rmSync(lock, { force: true });

    const applied = await apply;
    expect(applied.stderr).toBe("");
    expect(applied.exitCode).toBe(0);
    expect(theirs.length).toBeGreaterThan(0);
    expect(names.filter((n) => fx.named(n).length !== 1)).toEqual([]);
    for (const name of theirs) expect(applied.stdout).toContain(`adopted existing API token "${name}"`);
  });
});

/** Takes a lock file as the scripts do, naming this live process and a lease of ten minutes; false when held. */
function takeLock(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch {
    return false;
  }
  writeSync(fd, `${process.pid}\n${hostname()}\nrace-test\n${Date.now() + 600_000}\n`);
  closeSync(fd);
  return true;
}
