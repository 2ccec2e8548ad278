/**
 * The control surface, `/_emulator/...`: a test tool beside the API, without authentication (so
 * keep the emulator on loopback); faults and stats never apply to it.
 */
import type { Emulator } from "./api";
import { faultsError, FaultState } from "./faults";
import type { Body, Reply, Route } from "./http";
import { BODY_MAX_BYTES, envelope, errorReply, HttpError, matchRoute, parseJsonObject } from "./http";
import type { EmulatorFaults, EmulatorState } from "./types";

const CONTROL_ROUTES: readonly Route[] = [
  { template: "/_emulator/state", pattern: /^\/_emulator\/state$/, methods: ["GET"] },
  { template: "/_emulator/faults", pattern: /^\/_emulator\/faults$/, methods: ["POST"] },
  { template: "/_emulator/tokens", pattern: /^\/_emulator\/tokens$/, methods: ["POST"] },
  { template: "/_emulator/tokens/{id}", pattern: /^\/_emulator\/tokens\/([^/]+)$/, methods: ["DELETE"] },
  { template: "/_emulator/expire-access-tokens", pattern: /^\/_emulator\/expire-access-tokens$/, methods: ["POST"] },
  { template: "/_emulator/reset-stats", pattern: /^\/_emulator\/reset-stats$/, methods: ["POST"] },
];

/** Handles a control request; like the API, answers errors with the JSON envelope. */
export function control(emulator: Emulator, method: string, path: string, body: Body): Reply {
  try {
    const match = matchRoute(CONTROL_ROUTES, path);
    if (!match) throw new HttpError(404, `no control route ${path}`);
    const { route, param } = match;
    if (!route.methods.includes(method)) {
      throw new HttpError(405, `method ${method} not allowed on ${route.template}`, { allow: route.methods.join(", ") });
    }
    if (body.tooLarge) throw new HttpError(413, `request body exceeds ${BODY_MAX_BYTES} bytes`);
    switch (route.template) {
      case "/_emulator/state": {
        const state: EmulatorState = { tokens: emulator.store.records(), stats: emulator.stats(), faults: emulator.faults.config };
        return envelope(200, "emulator state", state);
      }
      case "/_emulator/faults": {
        const faults = parseJsonObject(body.text);
        const error = faultsError(faults);
        if (error) throw new HttpError(400, error);
        emulator.faults = new FaultState(faults as EmulatorFaults);
        return envelope(200, "faults set", emulator.faults.config);
      }
      case "/_emulator/tokens": {
        const input = parseJsonObject(body.text);
        if (input.count === undefined) return envelope(200, "token added", emulator.store.addChecked(input));
        return envelope(200, "tokens added", emulator.store.addManyChecked(input));
      }
      case "/_emulator/tokens/{id}":
        if (!emulator.store.delete(param ?? "")) throw new HttpError(404, `API token ${JSON.stringify(param)} not found`);
        return envelope(200, "token deleted", null);
      case "/_emulator/expire-access-tokens":
        emulator.sessions.expireAccessTokens();
        return envelope(200, "access tokens expired", null);
      default:
        emulator.resetStats();
        return envelope(200, "stats reset", null);
    }
  } catch (e) {
    if (e instanceof HttpError) return errorReply(e);
    throw e;
  }
}
