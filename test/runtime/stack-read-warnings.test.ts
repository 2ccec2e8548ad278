/**
 * The plan-time read, run as Terraform runs it (the bundled script, a folder with this
 * folder's applied records): its warnings for duplicates and a switch of id.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { startEmulator } from "../../src/emulator";
import { accountDigest } from "../../src/runtime/account-identity";
import { runProcess, SCRIPT_NODE, SCRIPT_PATH } from "../support/processes";

const BUNDLE = path.join(__dirname, "..", "..", "lib", "assets", "gpucloud-tf.js");
const USER = { username: "read-bot", password: "read-pw-77e1" };

test("duplicates and a switch of id are in the result's warnings", async () => {
  const emulator = await startEmulator({ users: [USER] });
  try {
    const first = emulator.addToken({ name: "inv-dup", createdAt: 100 });
    const second = emulator.addToken({ name: "inv-dup", createdAt: 200 });
    const moved = emulator.addToken({ name: "inv-moved", createdAt: 100 });
    const cwd = mkdtempSync(path.join(tmpdir(), "stack-read-warnings-"));
    mkdirSync(path.join(cwd, ".gpucloud-handoff"));
    // This folder last applied the newer of the two "inv-dup" (kept), and a token for "inv-moved" that is gone.
    const record = (key: string, id: string, name: string, workspace = "default") =>
      writeFileSync(
        path.join(cwd, ".gpucloud-handoff", `${key}.${workspace}.applied.json`),
        JSON.stringify({ key, workspace, id, name, api: accountDigest("GPUCLOUD_", emulator.url), at: new Date().toISOString() }),
      );
    record("k1", second.id, "inv-dup");
    record("k2", "tok_gone", "inv-moved");
    // Another workspace's record of another token: no concern of this workspace's (and no digest to compute).
    record("k2", "tok_of_another_workspace", "inv-moved", "other-workspace");
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
      cwd,
      env: { PATH: SCRIPT_PATH, GPUCLOUD_BASE_URL: emulator.url, GPUCLOUD_USERNAME: USER.username, GPUCLOUD_PASSWORD: USER.password },
      // As the construct writes it: each token in a short slot, with its key (what the records are filed under).
      stdin: JSON.stringify({ "t0.key": "k1", "t0.name": "inv-dup", "t1.key": "k2", "t1.name": "inv-moved", workspace: "default" }),
    });
    expect(ran.code).toBe(0);
    const result = JSON.parse(ran.stdout) as Record<string, string>;
    // The stack keeps the token this folder applied, not the oldest; the result is keyed by slot.
    expect(result["t0.id"]).toBe(second.id);
    expect(
      Object.keys(result)
        .filter((k) => k.includes("."))
        .every((k) => /^t[01]\./.test(k)),
    ).toBe(true);
    expect(result.warnings.split("\n")).toEqual([
      `2 API tokens are named "inv-dup" (ids ${second.id}, ${first.id}); the stack uses ${second.id}. Revoke or rename the others in the console to remove the ambiguity.`,
      `API token "inv-moved" now resolves to id ${moved.id}, not to id tok_gone, which the last apply managed and which no longer exists: the stack's tokenId and token switch to ${moved.id}.`,
    ]);
  } finally {
    await emulator.close();
  }
});

test("a pending record (a write whose apply failed) picks the token among duplicates, as the create half does, with no switch warning", async () => {
  const emulator = await startEmulator({ users: [USER] });
  try {
    emulator.addToken({ name: "inv-pending", createdAt: 100 });
    const written = emulator.addToken({ name: "inv-pending", createdAt: 200 });
    const cwd = mkdtempSync(path.join(tmpdir(), "stack-read-warnings-"));
    mkdirSync(path.join(cwd, ".gpucloud-handoff"));
    writeFileSync(
      path.join(cwd, ".gpucloud-handoff", "k1.default.applied.json"),
      JSON.stringify({
        key: "k1",
        workspace: "default",
        id: written.id,
        name: "inv-pending",
        api: accountDigest("GPUCLOUD_", emulator.url),
        pending: true,
        at: new Date().toISOString(),
      }),
    );
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
      cwd,
      env: { PATH: SCRIPT_PATH, GPUCLOUD_BASE_URL: emulator.url, GPUCLOUD_USERNAME: USER.username, GPUCLOUD_PASSWORD: USER.password },
      stdin: JSON.stringify({ "t0.key": "k1", "t0.name": "inv-pending", workspace: "default" }),
    });
    expect(ran.code).toBe(0);
    const result = JSON.parse(ran.stdout) as Record<string, string>;
    // The plan promises the id the create half will keep; otherwise its planned-id check refuses every apply.
    expect(result["t0.id"]).toBe(written.id);
    expect(result.warnings).not.toContain("now resolves to");
  } finally {
    await emulator.close();
  }
});
