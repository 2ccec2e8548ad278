/**
 * The file Terraform starts: bundled to lib/assets/gpucloud-tf.js, it turns on Node's own compile
 * cache and runs the script itself (./main.ts, bundled to lib/assets/gpucloud-tf-main.js).
 *
 * Terraform starts the script once per data source read and once per provisioner, and each start
 * compiles the script from source unless a compile cache holds it. `module.enableCompileCache`
 * (Node 22.8 and later; a documented API) keeps V8's compiled code of the modules loaded after
 * it in a folder, checked by Node against the source and the Node version, V8 flags and
 * architecture. Here that folder is `.gpucloud-cache/` of the working directory (the stack
 * folder), beside the state it serves, rather than a shared temp folder.
 *
 * - The cache holds compiled code and the literals of the source, nothing a run computed: no
 *   credential, token or API answer (test/runtime/code-cache.test.ts looks for them in it).
 * - Whatever fails (a folder that cannot be written, an older Node without the API) costs only
 *   the compile it would have saved; Node does not stop the run for it.
 * - GPUCLOUD_NO_CODE_CACHE=1 turns it off: nothing is read or written.
 */
import * as nodeModule from "node:module";
import path from "node:path";

const MAIN_FILE = "gpucloud-tf-main.js";
const CODE_CACHE_DIR = ".gpucloud-cache";
const NO_CODE_CACHE_ENV = "GPUCLOUD_NO_CODE_CACHE";

function launch(): void {
  const enable = (nodeModule as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (process.env[NO_CODE_CACHE_ENV] !== "1" && typeof enable === "function") {
    try {
      enable(path.resolve(CODE_CACHE_DIR));
    } catch {
      // Only a cache.
    }
  }
  // The script beside this file in lib/assets (a path, not a module of the sources: scripts/build.mjs bundles the two apart).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file found at run time, not a module of the sources
  (require(path.join(__dirname, MAIN_FILE)) as { runScript(): void }).runScript();
}

if (require.main === module) launch();
