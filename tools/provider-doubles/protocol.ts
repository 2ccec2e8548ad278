// Loading the .proto files at run time, and the TypeScript shapes of the messages the doubles
// exchange (as produced by @grpc/proto-loader with the options below: snake_case field names,
// enums as their names, int64 as JS numbers, bytes as Buffers).
import { existsSync } from "node:fs";
import path from "node:path";

import type * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

import type { CtyType, DynamicValueMessage } from "./cty";

const PROTO_FILES = ["tfplugin5.proto", "health.proto"] as const;

/**
 * Finds the folder holding the .proto files. The same code runs from the TS sources (ts-jest,
 * __dirname = tools/provider-doubles) and from the esbuild bundle (build/tools), so look next
 * to this module first, then walk up to the repository root and into tools/provider-doubles.
 */
export function findProtoDir(start: string = __dirname): string {
  const override = process.env.PROVIDER_DOUBLES_PROTO_DIR;
  if (override && existsSync(path.join(override, PROTO_FILES[0]))) return override;
  let dir = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(dir, PROTO_FILES[0]))) return dir;
    const inRepo = path.join(dir, "tools", "provider-doubles");
    if (existsSync(path.join(inRepo, PROTO_FILES[0]))) return inRepo;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`tfplugin5.proto not found above ${start} (looked for tools/provider-doubles/tfplugin5.proto)`);
}

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true, // field names exactly as on the wire: prior_state, requires_replace, ...
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

export interface LoadedServices {
  provider: grpc.ServiceDefinition;
  health: grpc.ServiceDefinition;
}

let loaded: LoadedServices | undefined;

export function loadServices(): LoadedServices {
  if (loaded) return loaded;
  const dir = findProtoDir();
  const def = protoLoader.loadSync(
    PROTO_FILES.map((f) => path.join(dir, f)),
    LOADER_OPTIONS,
  );
  // Package definitions are keyed by fully-qualified service name.
  const provider = def["tfplugin5.Provider"];
  const health = def["grpc.health.v1.Health"];
  if (!isService(provider) || !isService(health)) throw new Error("proto files do not define the expected services");
  loaded = { provider, health };
  return loaded;
}

function isService(d: unknown): d is grpc.ServiceDefinition {
  return typeof d === "object" && d !== null && !("format" in d) && !("type" in d);
}

// ---------------------------------------------------------------------------------------------
// Message shapes (only the fields the doubles use).

export type Severity = "INVALID" | "ERROR" | "WARNING";

export interface AttributePathStep {
  attribute_name?: string;
  element_key_string?: string;
  element_key_int?: number;
}
export interface AttributePath {
  steps: AttributePathStep[];
}

export interface Diagnostic {
  severity: Severity;
  summary: string;
  detail: string;
  attribute?: AttributePath;
}

/** Attribute path from attribute names, e.g. attrPath("triggers"). */
export function attrPath(...names: string[]): AttributePath {
  return { steps: names.map((attribute_name) => ({ attribute_name })) };
}

export function errorDiag(summary: string, detail: string, attribute?: AttributePath): Diagnostic {
  return { severity: "ERROR", summary, detail, ...(attribute ? { attribute } : {}) };
}

export function hasError(diags: readonly Diagnostic[]): boolean {
  return diags.some((d) => d.severity === "ERROR");
}

/** Schema of one attribute, written by hand in the doubles. */
export interface AttributeSpec {
  name: string;
  type: CtyType;
  description: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
}

export interface BlockSpec {
  version?: number;
  description?: string;
  attributes: AttributeSpec[];
}

/** The object type of a block, for `conform`. */
export function blockType(block: BlockSpec): CtyType {
  return ["object", Object.fromEntries(block.attributes.map((a) => [a.name, a.type]))];
}

/** Schema message as sent in GetSchema. */
export function schemaMessage(block: BlockSpec): object {
  return {
    version: block.version ?? 0,
    block: {
      version: block.version ?? 0,
      description: block.description ?? "",
      description_kind: "PLAIN",
      attributes: block.attributes.map((a) => ({
        name: a.name,
        type: Buffer.from(JSON.stringify(a.type)),
        description: a.description,
        description_kind: "PLAIN",
        required: a.required ?? false,
        optional: a.optional ?? false,
        computed: a.computed ?? false,
        sensitive: a.sensitive ?? false,
      })),
      block_types: [],
    },
  };
}

export interface TypedConfigRequest {
  type_name: string;
  config: DynamicValueMessage | null;
}

export interface UpgradeResourceStateRequest {
  type_name: string;
  version: number;
  raw_state: { json?: Buffer | null; flatmap?: Record<string, string> } | null;
}

export interface ReadResourceRequest {
  type_name: string;
  current_state: DynamicValueMessage | null;
  private: Buffer;
}

export interface PlanResourceChangeRequest {
  type_name: string;
  prior_state: DynamicValueMessage | null;
  proposed_new_state: DynamicValueMessage | null;
  config: DynamicValueMessage | null;
  prior_private: Buffer;
}

export interface ApplyResourceChangeRequest {
  type_name: string;
  prior_state: DynamicValueMessage | null;
  planned_state: DynamicValueMessage | null;
  config: DynamicValueMessage | null;
  planned_private: Buffer;
}

export interface ImportResourceStateRequest {
  type_name: string;
  id: string;
}

export interface ConfigureRequest {
  terraform_version: string;
  config: DynamicValueMessage | null;
}
