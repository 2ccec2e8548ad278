/**
 * A self-hosted runner whose /tmp other users share: another local user (uid 65534) plants, in the
 * sticky temp folder, a link at `gpucloud-<uid>` (where this user's run folders would live) that
 * points at a folder of the victim's, and folders of run folders' names open to all. The victim's
 * runs follow no link, use none of them and sweep none of them: they move to a private folder of
 * the home, and still share one login per account.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { ApiToken } from "../../src";
import { randomHex } from "../../src/runtime/io/crypto";
import { describeWithTerraform } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

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
    "links and folders another user planted are not followed, used or swept; one login per account for an apply of 12 tokens",
    async () => {
      const uid = process.getuid!();
      // A shared /tmp: sticky, writable by all, in a place the other user can reach (the suites' own temp folder is 0700).
      const shared = mkdtempSync(path.join(SYSTEM_TMP, "gpucloud-shared-tmp-"));
      cleanUp.push(shared);
      chmodSync(shared, 0o1777);
      // A folder of the victim's, holding files that look like locks and temporaries.
      const victim = mkdtempSync(path.join(tmpdir(), "gpucloud-victim-"));
      const victimFiles = [".terraform.lock.hcl", "lease", "poetry.lock", "report.tmp", "yarn.lock"];
      for (const f of victimFiles) writeFileSync(path.join(victim, f), f === "lease" ? "0" : "keep");
      // Links to it under the old, predictable name and under a run folder's form, and folders of that form open to all.
      const planted = [`gpucloud-${uid}-${randomHex(16)}`, `gpucloud-${uid}-${randomHex(16)}`];
      asNobody(
        [
          ...[`gpucloud-${uid}`, `gpucloud-${uid}-${randomHex(16)}`].map((name) => `ln -s '${victim}' '${path.join(shared, name)}'`),
          ...planted.map((name) => `mkdir -m 777 '${path.join(shared, name)}' && echo 0 > '${path.join(shared, name, "lease")}'`),
        ].join(" && "),
      );
      const before = readdirSync(shared).sort();

      const names = Array.from({ length: 12 }, (_, i) => `shared-tmp-${i}`);
      const home = mkdtempSync(path.join(tmpdir(), "gpucloud-shared-home-"));
      const tf = await fx.stack((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name })), {
        prefix: "gpucloud-shared-",
        env: fx.env({ TMPDIR: shared, HOME: home }),
      });
      fx.emulator.resetStats();
      const applied = await tf.apply({ check: true });
      // The plan's read, then one login for all the apply's scripts.
      expect(fx.emulator.stats().logins).toBe(2);
      expect(applied.stdout).not.toContain("could not share this run's");
      for (const name of names) expect(fx.named(name)).toHaveLength(1);
      // Another plan sweeps: nothing of the other user's, nothing where the link points.
      await tf.plan({ check: true });
      expect(readdirSync(victim).sort()).toEqual(victimFiles);
      for (const f of victimFiles.filter((f) => f !== "lease")) expect(readFileSync(path.join(victim, f), "utf8")).toBe("keep");
      for (const name of planted) expect(readdirSync(path.join(shared, name))).toEqual(["lease"]);
      // Nothing of ours in the shared folder; the run's own folders are this user's, 0700, in the home.
      expect(readdirSync(shared).sort()).toEqual(before);
      const parent = path.join(home, ".cache", "gpucloud", "runs");
      const ours = readdirSync(parent).map((name) => path.join(parent, name));
      expect(ours.length).toBeGreaterThan(0);
      for (const folder of [parent, ...ours]) {
        expect(spawnSync("stat", ["-c", "%u %a", folder], { encoding: "utf8" }).stdout.trim()).toBe(`${uid} 700`);
      }
    },
  );
});
