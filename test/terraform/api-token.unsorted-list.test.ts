/**
 * A server that ignores sortField/sortOrder and lists in its own order, oldest first, on an
 * account whose oldest tokens share one created_at (a migration, a clock of whole seconds): a
 * page of them looks sorted newest first. The provisioners of an apply once took such a page for
 * the newest tokens, stopped there, and missed the managed names another party created after the
 * run's walk: they created those names a second time. The writer's read before each wave of
 * creates must not trust such a page either.
 */
import { ApiToken } from "../../src";
import { describeWithTerraform } from "../support/terraform";
import { terraformFixture } from "../support/terraform-fixture";

const USER = { username: "unsorted-bot", password: "unsorted-pw-81d4" };
/** Two waves of creates: 20, then 16. */
const MANAGED = 36;
const WAVE = 20;

describeWithTerraform("a server that ignores the sort, listing oldest first", () => {
  /** Called with each request line the emulator logs, after the response went out. */
  let onRequest: (line: string) => void = () => undefined;
  const fx = terraformFixture({ users: [USER], emulator: { faults: { ignoreSortParams: true }, log: (line) => onRequest(line) } });

  test("with old tokens sharing one created_at and managed names created by another party during the apply: no name is created twice", async () => {
    // First in the list: 120 migrated tokens of one second, long ago; then newer ones.
    fx.emulator.addTokens({ name: "migrated", createdAt: 1_600_000_000, count: 120 });
    for (let i = 0; i < 5; i++) fx.emulator.addToken({ name: `recent-${i}`, createdAt: 1_700_000_000 + i });

    const names = Array.from({ length: MANAGED }, (_, i) => `unsorted-${i}`);
    const tf = await fx.stack((stack) => names.forEach((name, i) => new ApiToken(stack, `t${i}`, { name })), {
      prefix: "gpucloud-unsorted-",
    });

    // Right after the writer's first create (its walk and its first wave's read are done by then),
    // another party creates half of the second wave's names: the read before that wave must find them.
    const theirs: string[] = [];
    onRequest = (line) => {
      if (theirs.length > 0 || !line.startsWith("POST /api-tokens 200")) return;
      for (const name of names.slice(WAVE).filter((_, i) => i % 2 === 0)) {
        fx.emulator.addToken({ name, description: "made by another party" });
        theirs.push(name);
      }
    };
    const postsBefore = fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0;
    const applied = await tf.apply({ check: true });
    onRequest = () => undefined;

    expect(theirs).toHaveLength((MANAGED - WAVE) / 2);
    expect((fx.emulator.stats().byRoute["POST /api-tokens"] ?? 0) - postsBefore).toBe(MANAGED - theirs.length);
    const count = new Map<string, number>();
    for (const t of fx.emulator.tokens()) count.set(t.name, (count.get(t.name) ?? 0) + 1);
    expect(names.filter((n) => count.get(n) !== 1)).toEqual([]);
    for (const name of theirs) {
      const i = names.indexOf(name);
      expect(applied.stdout).toContain(`adopted existing API token "${name}" (id ${fx.named(name)[0].id}) for s/t${i}: no change`);
    }
  });
});
