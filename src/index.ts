/**
 * cdktf-gpucloud: CDK for Terraform constructs for a GPU cloud.
 *
 * The main entry holds the constructs only, with jsii-friendly signatures. The API client and
 * the emulator are Node-only tools, published as the subpaths `cdktf-gpucloud/client` and
 * `cdktf-gpucloud/emulator`.
 */
export * from "./constructs";
