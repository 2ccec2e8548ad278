/**
 * Another party creates managed names while an apply runs, on a server that sorts as asked. The
 * writer sends its creates in waves of 20, each decided on a newest-first read taken right before
 * it: a name another party created after the writer's walk, before the read of its wave, is read
 * and adopted, never created a second time. (Within one wave, a name created after that wave's
 * read and before its POST is the window the design accepts: about a second. The statistical
 * race, with no wave boundary held, is `npm run bench:faults`.)
 */
import { ApiToken } from "../../src";
import { describeWithTerraform } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "race-bot", password: "race-pw-2f8e" };
/** Two waves: race-0..race-19, then race-20..race-29. */
const NAMES = 30;
const WAVE = 20;

describeWithTerraform("managed names created by another party during an apply, on a server that sorts", () => {
  /** Called with each request line the emulator logs, after the response went out. */
  let onRequest: (line: string) => void = () => undefined;
  const fx = terraformFixture({ users: [USER], emulator: { log: (line) => onRequest(line) } });

  test("names another party creates while the writer's first wave is sent are read before the next wave and adopted: no name is created twice", async () => {
    for (let i = 0; i < 200; i++) fx.emulator.addToken({ name: `bystander-${i}`, createdAt: 1_700_000_000 + i });
    const names = Array.from({ length: NAMES }, (_, i) => `race-${i}`);
    const tf = await fx.stack((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name })), {
      prefix: "gpucloud-race-",
      timeoutMs: 180_000,
    });

    // Right after the writer's first create (its walk and its first wave's read are done by then), another
    // party creates every name of the second wave but one, in the same second as the writer's own creates.
    const theirs: string[] = [];
    onRequest = (line) => {
      if (theirs.length > 0 || !line.startsWith("POST /api-tokens 200")) return;
      for (const name of names.slice(WAVE + 1)) {
        fx.emulator.addToken({ name, description: "another party's" });
        theirs.push(name);
      }
    };
    const postsBefore = fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0;
    const applied = await tf.apply({ check: true });
    onRequest = () => undefined;

    expect(applied.stderr).toBe("");
    expect(theirs).toHaveLength(NAMES - WAVE - 1);
    expect(names.filter((n) => fx.named(n).length !== 1)).toEqual([]);
    expect((fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0) - postsBefore).toBe(NAMES - theirs.length);
    for (const [i, name] of names.entries()) {
      if (theirs.includes(name)) {
        expect(applied.stdout).toContain(`adopted existing API token "${name}" (id ${fx.named(name)[0].id}) for s/t${i}: no change`);
      } else {
        expect(applied.stdout).toContain(`created API token "${name}" (id ${fx.named(name)[0].id}) for s/t${i}`);
      }
    }
    expect(applied.stdout).toContain(`gpucloud: 0 of ${NAMES} tokens written; ${NAMES} to create`);
    expect(applied.stdout).toContain(`gpucloud: ${WAVE} of ${NAMES} tokens written; ${NAMES - WAVE} to create`);
    expect(applied.stdout).toContain(`gpucloud: ${NAMES} of ${NAMES} tokens written`);
  });
});
