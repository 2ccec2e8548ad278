/**
 * The contract between the synth-time constructs (`src/constructs`), the script that Terraform
 * runs (`src/runtime`) and the `gpucloud` CLI. Every layer may import it and it imports nothing
 * outside this folder, so it holds names, plain types and pure rules, nothing that does I/O.
 *
 * The script is invoked in two ways, and each has Terraform's own rules:
 *
 * - as the program of a `data "external"` block: `node <script> <command>`, the query as one
 *   JSON object on stdin (every value a string), and it must print one flat JSON object of
 *   strings on stdout. Errors: a message on stderr and a non-zero exit.
 * - as a `local-exec` provisioner: `node <script> <command>` through `/bin/sh -c`, with its
 *   inputs in environment variables (the provisioner's `environment` block). Output on
 *   stdout/stderr lands in Terraform's log.
 *
 * Secrets never travel through either channel: credentials come from the environment of the
 * Terraform process itself (see {@link CredentialEnv}).
 */

export * from "./commands";
export * from "./credentials";
export * from "./flavors";
export * from "./ledger";
export * from "./roster";
export * from "./run-ticket";
export * from "./stack-read";
export * from "./token-name";
export * from "./token-writer";
export * from "./token-value";
