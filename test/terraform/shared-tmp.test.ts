/**
 * A self-hosted runner whose /tmp other users share, and a job whose TMPDIR and HOME are not its
 * own: since issue 41 the library writes nothing outside Terraform's state and the API (no run
 * folder, session, lock or hand-off), so what another local user planted in the temp folder does
 * not matter. Another user (uid 65534) owns the temp folder and plants, where this user's run
 * folders once lived (`gpucloud-<uid>`), links to a folder of the victim's and folders open to
 * all; HOME names a folder that does not exist. The apply and the plans after it use none of
 * it, change none of it and create nothing, and log in once per script.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ApiToken } from "../../src";
import { describeWithTerraform, oneLine } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";
import { changedFiles, snapshotFiles } from "../support/written-files";

const USER = { username: "shared-tmp-bot", password: "shared-tmp-pw-6a1d" };
const NOBODY = 65534;
const SYSTEM_TMP = "/tmp";

/** Runs a shell command as another local user; the reason when that cannot be done here. */
function asNobody(command: string): void {
  const ran = spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "sh", "-c", command], { encoding: "utf8" });
  if (ran.status !== 0) throw new Error(`setpriv as uid ${NOBODY} failed: ${ran.error?.message ?? ran.stderr}`);
}

const otherUserAvailable = (): string | undefined => {
  if (process.getuid?.() !== 0) return "not root: cannot act as another local user";
  if (!existsSync(SYSTEM_TMP)) return `no ${SYSTEM_TMP}`;
  const probe = spawnSync("setpriv", [`--reuid=${NOBODY}`, "true"]);
  return probe.status === 0 ? undefined : `setpriv cannot run as uid ${NOBODY}`;
};

describeWithTerraform("a temp folder other users share", () => {
  const fx = terraformFixture({ users: [USER] });
  const cleanUp: string[] = [];
  afterAll(() => cleanUp.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const unavailable = otherUserAvailable();
  const maybe = unavailable === undefined ? test : test.skip;
  if (unavailable !== undefined) console.warn(`Skipping the other-user cases: ${unavailable}`);

  maybe(
    "a TMPDIR of another user's with links and folders planted, and a HOME that does not exist: nothing is used, changed or created; one login per script",
    async () => {
      const uid = process.getuid!();
      // A shared temp folder of another user's: sticky, writable by all, where that user can reach it (the suites' own is 0700).
      const shared = mkdtempSync(path.join(SYSTEM_TMP, "gpucloud-shared-tmp-"));
      cleanUp.push(shared);
      chownSync(shared, NOBODY, NOBODY);
      chmodSync(shared, 0o1777);
      // A folder of the victim's, holding files that look like locks and temporaries.
      const victim = mkdtempSync(path.join(tmpdir(), "gpucloud-victim-"));
      for (const f of [".terraform.lock.hcl", "lease", "poetry.lock", "report.tmp", "yarn.lock"]) {
        writeFileSync(path.join(victim, f), f === "lease" ? "0" : "keep");
      }
      // Links to it under the old run folders' names, and folders of that form open to all, with lapsed leases.
      asNobody(
        [
          `ln -s '${victim}' '${path.join(shared, `gpucloud-${uid}`)}'`,
          `ln -s '${victim}' '${path.join(shared, `gpucloud-${uid}-0123456789abcdef`)}'`,
          ...["fedcba9876543210", "00112233445566aa"].map(
            (hex) =>
              `mkdir -m 777 '${path.join(shared, `gpucloud-${uid}-${hex}`)}' && echo 0 > '${path.join(shared, `gpucloud-${uid}-${hex}`, "lease")}'`,
          ),
        ].join(" && "),
      );
      const home = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-shared-home-")), "missing");
      const sharedBefore = snapshotFiles(shared);
      const victimBefore = snapshotFiles(victim);

      const names = Array.from({ length: 12 }, (_, i) => `shared-tmp-${i}`);
      const tf = await fx.stack((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name, description: "v1" })), {
        prefix: "gpucloud-shared-",
        env: fx.env({ TMPDIR: shared, HOME: home }),
      });
      fx.emulator.resetStats();
      const applied = oneLine((await tf.apply({ check: true })).stdout);
      expect(applied).toContain("gpucloud: 12 of 12 tokens written");
      // The plan-time read, the writer and the read after the writes: one login each.
      expect(fx.emulator.stats().logins).toBe(3);
      for (const name of names) expect(fx.named(name)).toHaveLength(1);
      // A plan (where spent run folders were once swept), and a steady one.
      expect((await tf.plan({ detailedExitCode: true })).exitCode).toBe(0);

      // Nothing of the other user's changed, nothing where the links point, nothing of ours anywhere.
      expect(changedFiles(sharedBefore, snapshotFiles(shared))).toEqual([]);
      expect(changedFiles(victimBefore, snapshotFiles(victim))).toEqual([]);
      expect(existsSync(home)).toBe(false);
    },
  );
});
