export { GpuCloudAccount, type GpuCloudAccountProps } from "./account";
export * from "./api-token";
export * from "./flavor-filter-props";
export * from "./flavors";
export * from "./flavor-preference";
