/**
 * In-memory GPU cloud API emulator for tests and offline demos (Node built-ins only).
 * See `server.ts` for the behaviour chosen where the API spec is silent.
 */
export { startEmulator } from "./server";
export { defaultFlavors } from "./seed";
export { md5Hex } from "./crypto";
export type {
  AddTokenInput,
  AddTokensInput,
  EmulatorFaults,
  EmulatorOptions,
  EmulatorRateLimit,
  EmulatorState,
  EmulatorStats,
  EmulatorTokenRecord,
  EmulatorUser,
  Envelope,
  Flavor,
  FlavorRegionGroup,
  RunningEmulator,
  StoreNames,
} from "./types";
