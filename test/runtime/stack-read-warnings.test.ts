/**
 * The plan-time read, run as Terraform runs it (the bundled script, with a stand-in terraform that
 * prints the state's ledger): its warnings for duplicates and a switch of id.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { startEmulator } from "../../src/emulator";
import { encodeLedger } from "../../src/protocol";
import { standInTerraform } from "../support/fake-terraform";
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
    // The last apply managed the newer of the two "inv-dup" (kept), and a token for "inv-moved" that is gone.
    const account = { prefix: "GPUCLOUD_", api: emulator.url, identity: `user ${USER.username}` };
    const ledger = encodeLedger(
      new Map([
        ["s/dup", { name: "inv-dup", id: second.id, account, description: "" }],
        ["s/moved", { name: "inv-moved", id: "tok_gone", account, description: "" }],
      ]),
    );
    const ran = await runProcess(SCRIPT_NODE, [BUNDLE, "stack-read"], {
      cwd,
      env: {
        PATH: SCRIPT_PATH,
        GPUCLOUD_BASE_URL: emulator.url,
        GPUCLOUD_USERNAME: USER.username,
        GPUCLOUD_PASSWORD: USER.password,
        GPUCLOUD_TERRAFORM: standInTerraform(`echo '${JSON.stringify(ledger)}'`),
      },
      // As the construct writes it: each token in a short slot, with its path (what the ledger is keyed by).
      stdin: JSON.stringify({
        "t0.path": "s/dup",
        "t0.name": "inv-dup",
        "t1.path": "s/moved",
        "t1.name": "inv-moved",
        workspace: "default",
      }),
    });
    expect(ran.code).toBe(0);
    const result = JSON.parse(ran.stdout) as Record<string, string>;
    // The stack keeps the token the last apply managed, not the oldest; the result is keyed by slot.
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
