export * from "./api-token";
export * from "./flavors";
