// First: a cdktf app without the optional provider peers is told how to install them.
import "./provider-packages";

export { GpuCloudAccount, type GpuCloudAccountProps } from "./account";
export * from "./api-token";
export * from "./flavor-filter-props";
export * from "./flavors";
export * from "./flavor-preference";
