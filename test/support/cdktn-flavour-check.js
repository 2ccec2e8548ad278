// Setup file of jest.cdktn.config.js: fails every suite unless `cdktf` really is cdktn and the
// library really is its cdktn flavour, so a broken mapping cannot pass as a cdktn run.
const path = require("node:path");

const root = path.resolve(__dirname, "..", "..");
if (require("cdktf") !== require(path.join(root, "node_modules", "cdktn"))) {
  throw new Error("jest.cdktn.config.js: `cdktf` is not mapped to cdktn");
}
if (require("cdktf-gpucloud") !== require(path.join(root, "lib-cdktn", "index.js"))) {
  throw new Error("jest.cdktn.config.js: `cdktf-gpucloud` is not mapped to lib-cdktn (run `npm run build`)");
}
