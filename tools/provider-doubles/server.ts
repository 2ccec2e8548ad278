// A small tfplugin5 server: the protocol plumbing shared by the doubles. Each double describes
// its schemas and the behaviour of its resource and data source types (see ProviderDouble);
// this module decodes requests, dispatches by type name, encodes answers, and handles the
// cross-cutting parts (logging, Stop/cancellation, health).
import * as grpc from "@grpc/grpc-js";

import { conform, type CtyValue, fromDynamicValue, toDynamicValue } from "./cty";
import {
  type ApplyResourceChangeRequest,
  type AttributePath,
  type BlockSpec,
  blockType,
  type ConfigureRequest,
  type Diagnostic,
  errorDiag,
  type ImportResourceStateRequest,
  loadServices,
  type PlanResourceChangeRequest,
  type ReadResourceRequest,
  schemaMessage,
  type TypedConfigRequest,
  type UpgradeResourceStateRequest,
} from "./protocol";

/** Per-call context: `signal` aborts when Terraform cancels the call or sends Stop. */
export interface CallContext {
  signal: AbortSignal;
  log: (msg: string) => void;
}

export interface PlanResult {
  planned: CtyValue;
  requiresReplace?: AttributePath[];
  diagnostics?: Diagnostic[];
}

export interface ApplyResult {
  newState: CtyValue;
  diagnostics?: Diagnostic[];
}

export interface ManagedResourceDouble {
  schema: BlockSpec;
  validate?(config: CtyValue): Diagnostic[];
  /** Only called for creates and updates: destroys (proposed null) are planned as null here. */
  plan(req: { prior: CtyValue; proposed: CtyValue; config: CtyValue }): PlanResult;
  /** Only called for creates and updates: deletes (planned null) answer null here. */
  apply(req: { prior: CtyValue; planned: CtyValue; config: CtyValue }): ApplyResult;
  /** Defaults to returning the current state unchanged. */
  read?(state: CtyValue): { newState: CtyValue; diagnostics?: Diagnostic[] };
  /** Defaults to plugin-framework's answer for resources without import support. */
  importState?(id: string): { state: CtyValue; diagnostics?: Diagnostic[] };
}

export interface DataSourceDouble {
  schema: BlockSpec;
  validate?(config: CtyValue): Diagnostic[];
  read(config: CtyValue, ctx: CallContext): Promise<{ state: CtyValue; diagnostics: Diagnostic[] }>;
}

export interface EphemeralResourceDouble {
  schema: BlockSpec;
  validate?(config: CtyValue): Diagnostic[];
  /** The result is sent even with error diagnostics, as plugin-framework does (Terraform ignores it then). */
  open(config: CtyValue, ctx: CallContext): Promise<{ result: CtyValue; diagnostics: Diagnostic[] }>;
}

export interface ProviderDouble {
  /** Registry address used as the TF_REATTACH_PROVIDERS key. */
  address: string;
  /** Short name, used for the socket file and log lines. */
  name: string;
  providerSchema: BlockSpec;
  resources: Record<string, ManagedResourceDouble>;
  dataSources: Record<string, DataSourceDouble>;
  ephemeralResources?: Record<string, EphemeralResourceDouble>;
}

// plugin-framework providers (null >= 3.2, external >= 2.3) announce these; announcing
// plan_destroy means Terraform also calls PlanResourceChange for destroys, as with the real ones.
// Known difference: framework v1.14 (null 3.2.4, external 2.3.5) also announces
// move_resource_state and answers MoveResourceState (a `moved` block from another resource type
// to null_resource) with an error diagnostic; the double has no such RPC and announces false,
// so Terraform refuses such a move itself, with its own message.
const SERVER_CAPABILITIES = { plan_destroy: true, get_provider_schema_optional: true, move_resource_state: false };

type Handler<Req, Res> = (req: Req, ctx: CallContext) => Res | Promise<Res>;

export interface ServeOptions {
  log?: (msg: string) => void;
}

export interface RunningProvider {
  server: grpc.Server;
  /** Aborts all in-flight calls (external programs get killed). */
  abortAll(reason: string): void;
  /** Names of the RPCs called so far, in order of first use (handy when debugging). */
  calls: Map<string, number>;
}

/** Starts a gRPC server for `double` on the given unix socket path. */
const GRPC_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export async function serveProvider(double: ProviderDouble, socketPath: string, opts: ServeOptions = {}): Promise<RunningProvider> {
  const log = opts.log ?? (() => undefined);
  const services = loadServices();
  const inFlight = new Set<AbortController>();
  const calls = new Map<string, number>();

  // Wraps a handler: decodes nothing itself, but gives it a cancellable context, logs, and
  // turns exceptions into gRPC errors (Terraform shows them as "rpc error: code = Internal").
  function unary<Req, Res>(rpc: string, fn: Handler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      calls.set(rpc, (calls.get(rpc) ?? 0) + 1);
      const ac = new AbortController();
      inFlight.add(ac);
      let done = false;
      // Seen with Terraform 1.11 + grpc-js 1.14: "cancelled" also fires for calls that were
      // already answered, so only a cancellation while the handler still runs counts.
      call.on("cancelled", () => {
        if (done) return;
        log(`${double.name}: ${rpc} cancelled by client`);
        ac.abort(new Error("context canceled"));
      });
      const typeName = (call.request as { type_name?: string } | null)?.type_name;
      log(`${double.name}: ${rpc}${typeName ? ` ${typeName}` : ""}`);
      Promise.resolve()
        .then(() => fn(call.request, { signal: ac.signal, log }))
        .then(
          (res) => {
            finish();
            callback(null, res);
          },
          (err: unknown) => {
            finish();
            const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
            log(`${double.name}: ${rpc} failed: ${message}`);
            callback({
              code: grpc.status.INTERNAL,
              details: `provider double ${double.name}: ${err instanceof Error ? err.message : String(err)}`,
            });
          },
        );
      function finish(): void {
        done = true;
        inFlight.delete(ac);
      }
    };
  }

  const unknownType = (kind: string, name: string): Diagnostic =>
    errorDiag(`Unknown ${kind} type`, `The provider double ${double.name} has no ${kind} type named "${name}".`);

  const handlers: grpc.UntypedServiceImplementation = {
    GetMetadata: unary("GetMetadata", () => ({
      server_capabilities: SERVER_CAPABILITIES,
      diagnostics: [],
      resources: Object.keys(double.resources).map((type_name) => ({ type_name })),
      data_sources: Object.keys(double.dataSources).map((type_name) => ({ type_name })),
      ephemeral_resources: Object.keys(double.ephemeralResources ?? {}).map((type_name) => ({ type_name })),
    })),

    GetSchema: unary("GetSchema", () => ({
      provider: schemaMessage(double.providerSchema),
      resource_schemas: mapValues(double.resources, (r) => schemaMessage(r.schema)),
      data_source_schemas: mapValues(double.dataSources, (d) => schemaMessage(d.schema)),
      ephemeral_resource_schemas: mapValues(double.ephemeralResources ?? {}, (e) => schemaMessage(e.schema)),
      provider_meta: schemaMessage({ attributes: [] }),
      server_capabilities: SERVER_CAPABILITIES,
      diagnostics: [],
    })),

    // Nothing to prepare: the provider configurations are empty. Echo it back as msgpack.
    PrepareProviderConfig: unary("PrepareProviderConfig", (req: { config: TypedConfigRequest["config"] }) => ({
      prepared_config: toDynamicValue(fromDynamicValue(req.config)),
      diagnostics: [],
    })),

    Configure: unary("Configure", (req: ConfigureRequest) => {
      log(`${double.name}: configured by Terraform ${req.terraform_version}`);
      return { diagnostics: [] };
    }),

    ValidateResourceTypeConfig: unary("ValidateResourceTypeConfig", (req: TypedConfigRequest) => {
      const r = double.resources[req.type_name];
      if (!r) return { diagnostics: [unknownType("resource", req.type_name)] };
      return { diagnostics: r.validate?.(fromDynamicValue(req.config)) ?? [] };
    }),

    ValidateDataSourceConfig: unary("ValidateDataSourceConfig", (req: TypedConfigRequest) => {
      const d = double.dataSources[req.type_name];
      if (!d) return { diagnostics: [unknownType("data source", req.type_name)] };
      return { diagnostics: d.validate?.(fromDynamicValue(req.config)) ?? [] };
    }),

    // Terraform hands over the stored JSON; answer msgpack shaped by the current schema (all
    // schemas are version 0, so "upgrading" is only re-encoding).
    UpgradeResourceState: unary("UpgradeResourceState", (req: UpgradeResourceStateRequest) => {
      const r = double.resources[req.type_name];
      if (!r) return { diagnostics: [unknownType("resource", req.type_name)] };
      const json = req.raw_state?.json;
      if (!json || json.length === 0) {
        return {
          diagnostics: [
            errorDiag("Unable to upgrade resource state", "The provider double only understands JSON state (no legacy flatmap state)."),
          ],
        };
      }
      let upgraded: CtyValue;
      try {
        upgraded = conform(blockType(r.schema), JSON.parse(json.toString("utf8")), req.type_name);
      } catch (e) {
        return { diagnostics: [errorDiag("Unable to upgrade resource state", (e as Error).message)] };
      }
      return { upgraded_state: toDynamicValue(upgraded), diagnostics: [] };
    }),

    ReadResource: unary("ReadResource", (req: ReadResourceRequest) => {
      const r = double.resources[req.type_name];
      if (!r) return { diagnostics: [unknownType("resource", req.type_name)] };
      const state = fromDynamicValue(req.current_state);
      const res = r.read ? r.read(state) : { newState: state };
      return { new_state: toDynamicValue(res.newState), private: req.private, diagnostics: res.diagnostics ?? [] };
    }),

    PlanResourceChange: unary("PlanResourceChange", (req: PlanResourceChangeRequest) => {
      const r = double.resources[req.type_name];
      if (!r) return { diagnostics: [unknownType("resource", req.type_name)] };
      const proposed = fromDynamicValue(req.proposed_new_state);
      if (proposed === null) {
        // A destroy: the only valid plan is null.
        return { planned_state: toDynamicValue(null), planned_private: req.prior_private, requires_replace: [], diagnostics: [] };
      }
      const res = r.plan({ prior: fromDynamicValue(req.prior_state), proposed, config: fromDynamicValue(req.config) });
      return {
        planned_state: toDynamicValue(res.planned),
        requires_replace: res.requiresReplace ?? [],
        planned_private: req.prior_private,
        diagnostics: res.diagnostics ?? [],
      };
    }),

    ApplyResourceChange: unary("ApplyResourceChange", (req: ApplyResourceChangeRequest) => {
      const r = double.resources[req.type_name];
      if (!r) return { diagnostics: [unknownType("resource", req.type_name)] };
      const planned = fromDynamicValue(req.planned_state);
      if (planned === null) return { new_state: toDynamicValue(null), diagnostics: [] }; // delete
      const res = r.apply({ prior: fromDynamicValue(req.prior_state), planned, config: fromDynamicValue(req.config) });
      return { new_state: toDynamicValue(res.newState), private: req.planned_private, diagnostics: res.diagnostics ?? [] };
    }),

    ImportResourceState: unary("ImportResourceState", (req: ImportResourceStateRequest) => {
      const r = double.resources[req.type_name];
      if (!r) return { diagnostics: [unknownType("resource", req.type_name)] };
      if (!r.importState) {
        // terraform-plugin-framework's answer for a resource that does not implement
        // ResourceWithImportState (the framework's ImportResourceState checks this first).
        return {
          imported_resources: [],
          diagnostics: [
            errorDiag(
              "Resource Import Not Implemented",
              "This resource does not support import. Please contact the provider developer for additional information.",
            ),
          ],
        };
      }
      const res = r.importState(req.id);
      return {
        imported_resources: res.state === null ? [] : [{ type_name: req.type_name, state: toDynamicValue(res.state) }],
        diagnostics: res.diagnostics ?? [],
      };
    }),

    ReadDataSource: unary("ReadDataSource", async (req: TypedConfigRequest, ctx) => {
      const d = double.dataSources[req.type_name];
      if (!d) return { diagnostics: [unknownType("data source", req.type_name)] };
      const res = await d.read(fromDynamicValue(req.config), ctx);
      // On errors Terraform ignores the state; send a null one rather than a half-built object.
      return {
        state: toDynamicValue(res.diagnostics.some((x) => x.severity === "ERROR") ? null : res.state),
        diagnostics: res.diagnostics,
      };
    }),

    ValidateEphemeralResourceConfig: unary("ValidateEphemeralResourceConfig", (req: TypedConfigRequest) => {
      const e = double.ephemeralResources?.[req.type_name];
      if (!e) return { diagnostics: [unknownType("ephemeral resource", req.type_name)] };
      return { diagnostics: e.validate?.(fromDynamicValue(req.config)) ?? [] };
    }),

    // No renew_at and no private data: Terraform then never calls Renew (plugin-framework's
    // answer for an ephemeral resource without Renew, as hashicorp/local's local_command).
    OpenEphemeralResource: unary("OpenEphemeralResource", async (req: TypedConfigRequest, ctx) => {
      const e = double.ephemeralResources?.[req.type_name];
      if (!e) return { diagnostics: [unknownType("ephemeral resource", req.type_name)] };
      const res = await e.open(fromDynamicValue(req.config), ctx);
      return { result: toDynamicValue(res.result), diagnostics: res.diagnostics };
    }),

    // plugin-framework's answers for a resource that implements neither Renew nor Close.
    RenewEphemeralResource: unary("RenewEphemeralResource", (req: { type_name: string }) => {
      if (!double.ephemeralResources?.[req.type_name]) return { diagnostics: [unknownType("ephemeral resource", req.type_name)] };
      return {
        diagnostics: [
          errorDiag(
            "Ephemeral Resource Renew Not Implemented",
            "An unexpected error was encountered when renewing the ephemeral resource. Terraform sent a renewal request for an " +
              "ephemeral resource that has not implemented renewal logic.\n\nPlease report this to the provider developer.",
          ),
        ],
      };
    }),

    CloseEphemeralResource: unary("CloseEphemeralResource", (req: { type_name: string }) => {
      if (!double.ephemeralResources?.[req.type_name]) return { diagnostics: [unknownType("ephemeral resource", req.type_name)] };
      return { diagnostics: [] };
    }),

    // Like terraform-plugin-go: Stop cancels the contexts of calls in flight (killing external
    // programs); calls that arrive afterwards are served normally.
    Stop: unary("Stop", () => {
      abortAll("Stop requested by Terraform");
      return { Error: "" };
    }),
  };

  function abortAll(reason: string): void {
    for (const ac of inFlight) if (!ac.signal.aborted) ac.abort(new Error(reason));
  }

  // The real providers' limit (terraform-plugin-go's tf5server, 256 MiB each way), not grpc's default of 4 MiB:
  // a configuration of thousands of tokens sends Terraform messages larger than that.
  const server = new grpc.Server({
    "grpc.max_receive_message_length": GRPC_MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": GRPC_MAX_MESSAGE_BYTES,
  });
  server.addService(services.provider, handlers);
  server.addService(services.health, {
    Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const service = call.request.service;
      // go-plugin checks the "plugin" service; "" is the conventional whole-server check.
      if (service === "plugin" || service === "") callback(null, { status: "SERVING" });
      else callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${service}` });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  return { server, abortAll, calls };
}

function mapValues<T, U>(rec: Record<string, T>, fn: (v: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, fn(v)]));
}
