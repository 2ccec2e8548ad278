/**
 * A size the docs state is the size of the build, within the slack "about" allows: the figure is
 * read from the doc and the file measured, so a bundle that grows or shrinks fails here until the
 * doc says what it is (run after `npm run build`, as every suite is).
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(__dirname, "../..");

test("docs/operations.md states the size of the script's bundle as built", () => {
  const doc = readFileSync(path.join(root, "docs/operations.md"), "utf8");
  const stated = /`gpucloud-tf-main\.js` \|[^\n]*?about (\d+) KiB/.exec(doc);
  expect(stated).not.toBeNull();
  const statedKiB = Number(stated![1]);
  const builtKiB = statSync(path.join(root, "lib/assets/gpucloud-tf-main.js")).size / 1024;
  // "about" covers a tenth either way: small changes to the script do not touch the doc.
  expect(Math.abs(builtKiB - statedKiB) / builtKiB).toBeLessThanOrEqual(0.1);
});
