// The layers of src/, kept by dependency-cruiser in `npm test` (`npm run lint:layers`).
// Each rule is true of the code today; a new import that breaks one fails the test run and names
// the rule, the importing file and the imported one. Type-only imports count: a type drags its
// module into the .d.ts that users compile.
//
//   constructs  synth time, knows cdktf; reaches the script only through the protocol
//   runtime     the script Terraform runs; uses client, shared and protocol, never cdktf
//   shared      what the runtime script and the gpucloud CLI both run; no cdktf
//   cli         the gpucloud CLI; client, shared and protocol
//   client      the API client: HTTP and zod; of the other layers only the protocol's name rule
//   protocol    the contract of constructs, script and CLI: imports nothing outside itself
//   emulator    the in-memory API: Node built-ins only
/** npm packages of the synth-time world; none of them may reach the script, the CLI or the client. */
const CDK_PACKAGES = "(^|/)node_modules/(cdktf|cdktn|constructs|@cdktf/[^/]+)/";
const PROTOCOL = "^src/protocol/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "constructs-not-runtime",
      comment: "Constructs reach the script only through the protocol (src/protocol); the runtime ships only as the bundle.",
      severity: "error",
      from: { path: "^src/constructs/" },
      to: { path: "^src/runtime/" },
    },
    {
      name: "constructs-no-client-shared-cli-emulator",
      comment: "Synthesis loads neither the API client (undici, zod) nor the CLI's or the script's code, nor the emulator.",
      severity: "error",
      from: { path: "^src/constructs/" },
      to: { path: "^src/(client|shared|cli|emulator)/" },
    },
    {
      name: "client-nothing-of-cdk",
      comment: "The client is plain Node: usable without cdktf, cdktn or constructs installed.",
      severity: "error",
      from: { path: "^src/client/" },
      to: { path: CDK_PACKAGES },
    },
    {
      name: "client-no-other-layer",
      comment:
        "The client is the bottom layer: it imports nothing of the runtime, the constructs, shared, the CLI or the emulator, and of the protocol only the token-name rule that the constructs share.",
      severity: "error",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: "^src/client/|^src/protocol/token-name\\.ts$" },
    },
    {
      name: "emulator-node-built-ins-only",
      comment:
        "The emulator stands for the real API: it shares no code with the client (a shared bug would hide itself) and needs no npm package.",
      severity: "error",
      from: { path: "^src/emulator/" },
      to: { pathNot: "^src/emulator/", dependencyTypesNot: ["core"] },
    },
    {
      name: "runtime-shared-cli-no-cdk",
      comment: "The script, the code it shares with the CLI, and the CLI run without cdktf, cdktn or constructs.",
      severity: "error",
      from: { path: "^src/(runtime|shared|cli)/" },
      to: { path: CDK_PACKAGES },
    },
    {
      name: "runtime-no-constructs-cli-emulator",
      comment: "The script is below the constructs and beside the CLI: it imports neither, nor the emulator.",
      severity: "error",
      from: { path: "^src/runtime/" },
      to: { path: "^src/(constructs|cli|emulator|cdktn-bindings)/|^src/index\\.ts$" },
    },
    {
      name: "shared-and-cli-not-runtime",
      comment: "Code the CLI runs reaches the script only through the protocol (what the script and the CLI share lives in src/shared).",
      severity: "error",
      from: { path: "^src/(shared|cli)/" },
      to: { path: "^src/runtime/" },
    },
    {
      name: "shared-no-constructs-cli-emulator",
      comment: "src/shared is below the script and the CLI.",
      severity: "error",
      from: { path: "^src/shared/" },
      to: { path: "^src/(constructs|cli|emulator|cdktn-bindings)/|^src/index\\.ts$" },
    },
    {
      name: "cli-no-constructs-emulator",
      comment: "The CLI talks to the API: no constructs, no emulator.",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/(constructs|emulator|cdktn-bindings)/|^src/index\\.ts$" },
    },
    {
      name: "protocol-imports-nothing",
      comment: "The protocol is loaded at synth time, in the script and in the CLI: whatever it imported would land in all three.",
      severity: "error",
      from: { path: PROTOCOL },
      to: { pathNot: PROTOCOL },
    },
    {
      name: "src-not-repo-tooling",
      comment: "The package ships src/ only: tools/, test/, scripts/ and examples/ are repo-only.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(tools|test|scripts|examples)/" },
    },
    {
      name: "src-no-import-cycles",
      comment: "No cycle of run-time imports (a cycle through a type-only import loads nothing and is allowed).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "src-resolvable",
      comment: "An import that resolves to nothing is a typo or a missing dependency.",
      severity: "error",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
