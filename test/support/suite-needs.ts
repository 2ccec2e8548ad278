import { appendFileSync } from "node:fs";

/**
 * A suite that needs something of the machine (terraform, a PostgreSQL server): skipped with a
 * console warning where it is unusable, or a failing test where the run requires it; where it
 * runs, one line "<ISO time>\t<version>\t<suite>" goes to the marker file, so that CI can fail
 * when no such suite actually ran (.ci/run).
 */
export interface SuiteNeed {
  /** As messages name it: "terraform", "PostgreSQL". */
  readonly what: string;
  /** The variable that, set to "1", turns the skip into a failing test. */
  readonly requiredEnv: string;
  /** The variable naming the marker file. */
  readonly markerEnv: string;
  readonly available: () => { readonly ok: true; readonly version: string } | { readonly ok: false; readonly reason: string };
}

/** `describe` (or `around`, a describe of another need) for a suite that needs `need` (see SuiteNeed). */
export function describeNeeding(
  need: SuiteNeed,
  name: string,
  fn: () => void,
  around: (name: string, fn: () => void) => void = describe,
): void {
  const found = need.available();
  if (!found.ok) {
    if (process.env[need.requiredEnv] === "1") {
      describe(name, () => {
        it(`needs ${need.what}`, () => {
          throw new Error(`${need.what} is required (${need.requiredEnv}=1) but unusable: ${found.reason}`);
        });
      });
      return;
    }
    console.warn(`Skipping ${need.what} suite "${name}": ${found.reason}`);
    describe.skip(name, fn);
    return;
  }
  around(name, () => {
    beforeAll(() => {
      const marker = process.env[need.markerEnv];
      if (marker) appendFileSync(marker, `${new Date().toISOString()}\t${found.version}\t${name.replace(/\s+/g, " ")}\n`);
    });
    fn();
  });
}
