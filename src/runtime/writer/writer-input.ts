import { readFileSync } from "node:fs";
import * as path from "node:path";

import { decodeRunTicket, type RunTicket, WriterEnv, type WriterInputs, type WriterPlanned } from "../../protocol";
import { ConfigError, envPrefixOf } from "../../shared/config";
import { errorMessage } from "../../shared/error-message";
import { requireName } from "../names/name-input";
import type { WantedToken } from "./write-decision";

/** What the writer of one account is asked to do (see WriterEnv). */
export interface WriterInput {
  /** The account's variable prefix; undefined for the default account. */
  readonly envPrefix?: string;
  readonly baseUrl?: string;
  readonly ticket?: RunTicket;
  /** Every token of the writer's account, in the order of the configuration. */
  readonly tokens: readonly WantedToken[];
}

/** The writer's input from its environment and its inputs file (relative to `cwd`, the stack folder). */
export function readWriterInput(env: NodeJS.ProcessEnv, cwd: string): WriterInput {
  const inputsPath = env[WriterEnv.INPUTS];
  if (!inputsPath) throw new ConfigError(`${WriterEnv.INPUTS} is not set (this command runs as the token writer's provisioner)`);
  const inputs = readInputsFile(path.resolve(cwd, inputsPath));
  const planned: Record<string, WriterPlanned[string]> = {};
  for (let i = 0; env[`${WriterEnv.PLANNED_PREFIX}${i}`] !== undefined; i++) {
    const variable = `${WriterEnv.PLANNED_PREFIX}${i}`;
    Object.assign(planned, parseJsonObject(env[variable] as string, variable) as WriterPlanned);
  }
  const tokens = Object.entries(inputs.tokens).map(([tokenPath, [name, description]]) => {
    const plan = planned[tokenPath];
    if (plan === undefined) throw new ConfigError(`the plan gave the token writer nothing for ${tokenPath} (${WriterEnv.PLANNED_PREFIX}*)`);
    const given = plan.n ?? name;
    const wantedDescription = plan.d ?? description ?? undefined;
    return {
      path: tokenPath,
      name: requireName(given, `the name of ${tokenPath}`),
      ...(wantedDescription !== undefined ? { description: wantedDescription } : {}),
      plannedId: plan.i ?? "",
      ...(plan.p !== undefined
        ? { previousNames: plan.p.map((previous, i) => requireName(previous, `previous name ${i} of ${tokenPath}`)) }
        : {}),
    };
  });
  const prefix = env[WriterEnv.ENV_PREFIX];
  return {
    envPrefix: prefix ? envPrefixOf(prefix) : undefined,
    baseUrl: env[WriterEnv.BASE_URL] || undefined,
    ticket: decodeRunTicket(env[WriterEnv.TICKET]),
    tokens,
  };
}

function readInputsFile(file: string): WriterInputs {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(
      `cannot read the token writer's inputs ${file} (${errorMessage(err)}): apply in the folder the plan was synthesized into, ` +
        `after the same synth`,
    );
  }
  const parsed = parseJsonObject(text, file) as Partial<WriterInputs>;
  if (parsed.v !== 1 || parsed.tokens === null || typeof parsed.tokens !== "object") {
    throw new ConfigError(`${file} is not a token writer's inputs file of this version of the library`);
  }
  return parsed as WriterInputs;
}

function parseJsonObject(text: string, where: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ConfigError(`${where} is not a JSON object`);
}
