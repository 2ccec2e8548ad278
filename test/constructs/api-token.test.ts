import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

import { ExternalProvider } from "@cdktf/provider-external/lib/provider";
import { NullProvider } from "@cdktf/provider-null/lib/provider";
import { App, Fn, Lazy, Op, TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";
import { type Construct, Node } from "constructs";

import { ApiToken, GpuCloudAccount } from "../../src";

/** Synthesizes one stack and returns its parsed cdk.tf.json. */
function synth(build: (stack: TerraformStack) => void): any {
  const app = Testing.app();
  const stack = new TerraformStack(app, "test");
  build(stack);
  return JSON.parse(Testing.synth(stack));
}

function only<T>(record: Record<string, T> | undefined): T {
  const values = Object.values(record ?? {});
  expect(values).toHaveLength(1);
  return values[0];
}

describe("ApiToken synthesis", () => {
  test("declares the stack's plan-time read, the account's writer and a read after the writes that exists only while writing", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci-pipeline", description: "for CI" }));

    // No resource per token: the stack's writer of the default account, under its fixed name.
    expect(Object.keys(json.resource.null_resource)).toEqual(["gpucloud_token_writer"]);
    const writer = json.resource.null_resource.gpucloud_token_writer;
    // Unknown at plan only when the plan-time read says the API differs.
    // Through a local value holding the plan-time read's result (Terraform decodes a data source's result for every expression that reads it).
    const observedName = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const observed = json.locals[observedName];
    expect(observedName).toMatch(/^gpucloud-stack-read_observed_[0-9A-F]+$/);
    expect(observed).toMatch(/^\$\{data\.external\.gpucloud-stack-read_[0-9A-F]+\.result\}$/);
    // Keyed by construct path and field, so that a plan names the token and the field of a change; no ids, no account
    // keys for the default account. The plan-time read's query and result name each token by a short slot (t0, t1, ...).
    expect(writer.triggers).toEqual({
      "test/ci.name": "ci-pipeline",
      "test/ci.description": "for CI",
      "test/ci.in_sync": `\${local.${observedName}["t0.in_sync"] == "true" ? "true" : (timestamp() == "never" ? "never" : "true")}`,
    });

    // One create-time provisioner, no destroy-time one: the API has no delete (the roster warns on destroy).
    expect(writer.provisioner).toHaveLength(1);
    const create = writer.provisioner[0]["local-exec"];
    expect(create.command).toMatch(/^node \.\/assets\/gpucloud-runtime\/[0-9A-F]+\/gpucloud-tf\.js token-writer$/);
    expect(create.when).toBeUndefined();
    // The literal names and descriptions in the stack's inputs file; the id the plan found, and the plan's ticket, from the plan-time read.
    expect(create.environment).toEqual({
      GPUCLOUD_WRITER_INPUTS: expect.stringMatching(/^assets\/[^/]+\/[0-9A-F]+\/writer-inputs\.json$/),
      GPUCLOUD_WRITER_PLANNED_0: `\${jsonencode({"test/ci" = {i = local.${observedName}["t0.id"]}})}`,
      GPUCLOUD_WRITER_TICKET: `\${local.${observedName}["ticket"]}`,
    });

    const externals = json.data.external;
    expect(Object.keys(externals)).toHaveLength(2);
    const planTimeReadName = Object.keys(externals).find((k) => k.startsWith("gpucloud-stack-read_") && !k.includes("after-write"))!;
    const planTimeRead = externals[planTimeReadName];
    const read = Object.entries<any>(externals).find(([k]) => k.includes("after-write"))![1];
    expect(planTimeRead.program).toEqual(["node", expect.stringMatching(/^\.\/assets\/.*gpucloud-tf\.js$/), "stack-read"]);
    // The path names the construct in the read's errors.
    expect(planTimeRead.query).toEqual({
      "t0.key": expect.stringMatching(/^[0-9a-f]{42}$/),
      "t0.path": "test/ci",
      "t0.name": "ci-pipeline",
      "t0.description": "for CI",
      workspace: "${terraform.workspace}",
    });
    expect(planTimeRead.depends_on).toBeUndefined();
    expect(read.program[2]).toBe("stack-read");
    // The read after the writes has the plan's ticket (where the plan's walk ended: it lists what is newer), and reads
    // only the tokens the plan-time read found no id for.
    const idKnown = `local.${observedName}["\${k}.id"] != ""`;
    expect(read.query).toEqual({
      ...planTimeRead.query,
      after_write: "true",
      ticket: `\${local.${observedName}["ticket"]}`,
      new_slots: `\${join(",", [for k in ["t0"] : k if !(${idKnown})])}`,
    });
    expect(read.depends_on).toEqual(["null_resource.gpucloud_token_writer"]);
    expect(observed).toBe(`\${data.external.${planTimeReadName}.result}`);
    // An instance only while the plan-time read found no token (a create or an adoption at apply).
    expect(read.count).toBe(`\${alltrue([for k in ["t0"] : ${idKnown}]) ? 0 : 1}`);
    // The token's attributes: one local per account, the plan-time read's result while it found the token
    // (in sync, or updated in place: known at plan), else the read's.
    const readName = Object.keys(externals).find((k) => k.includes("after-write"))!;
    const attributesName = Object.keys(json.locals).find((k) => k.includes("_attributes_"))!;
    expect(Object.keys(json.locals)).toHaveLength(3);
    expect(json.locals[attributesName]).toBe(
      `\${{for k in ["t0"] : k => ${idKnown} ? local.${observedName} : one(data.external.${readName}[*].result)}}`,
    );
    // The ledger of what the apply managed, in the state: the plan-time read's, and over it the read's after the writes.
    const ledgersName = Object.keys(json.locals).find((k) => k.includes("_ledgers_"))!;
    expect(json.locals[ledgersName]).toBe(
      `\${[jsondecode(local.${observedName}["ledger"]), try(jsondecode(one(data.external.${readName}[*].result)["ledger"]), {a = {}, t = {}})]}`,
    );
    expect(json.output.gpucloud_token_ledger.value).toBe(
      `\${alltrue([for id in [null_resource.gpucloud_token_writer.id] : id != null]) ? ` +
        `jsonencode({a = merge([for l in local.${ledgersName} : l.a]...), t = merge([for l in local.${ledgersName} : l.t]...), v = 1}) : null}`,
    );
    // Unknown at plan while the writer is replaced, and written only after the writes: a failed apply keeps the last good ledger.
    expect(json.output.gpucloud_token_ledger.depends_on).toEqual([`data.external.${readName}`]);

    expect(json.provider.null).toBeDefined();
    expect(json.provider.external).toBeDefined();
  });

  test("N tokens share one stack read and one writer; each has its own fields in the query and its own trigger keys", () => {
    const json = synth((stack) => {
      for (let i = 0; i < 5; i++) new ApiToken(stack, `t${i}`, { name: `token-${i}`, previousNames: [`old-${i}`] });
    });
    const inventories = Object.keys(json.data.external).filter((k) => k.startsWith("gpucloud-stack-read") && !k.includes("after-write"));
    expect(inventories).toHaveLength(1);
    expect(Object.keys(json.data.external)).toHaveLength(2);
    const after = Object.entries<any>(json.data.external).find(([k]) => k.includes("after-write"))![1];
    expect(after.depends_on).toEqual(["null_resource.gpucloud_token_writer"]);
    const query = json.data.external[inventories[0]].query;
    expect(Object.keys(query)).toHaveLength(21);
    expect(query.workspace).toBe("${terraform.workspace}");
    const writer = only<any>(json.resource.null_resource);
    // Three keys per token: name, drift marker, and no description (not managed); previous names stay out of the triggers.
    expect(Object.keys(writer.triggers)).toHaveLength(10);
    const slots = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const path = `test/t${i}`;
      const slot = Object.keys(query)
        .find((k) => k.endsWith(".path") && query[k] === path)!
        .slice(0, -".path".length);
      slots.add(slot);
      expect(query[`${slot}.key`]).toMatch(/^[0-9a-f]{42}$/);
      expect(query[`${slot}.name`]).toBe(writer.triggers[`${path}.name`]);
      expect(query[`${slot}.previous.0`]).toBe(`old-${i}`);
      expect(writer.triggers[`${path}.in_sync`]).toContain(`["${slot}.in_sync"]`);
    }
    expect([...slots].sort()).toEqual(["t0", "t1", "t2", "t3", "t4"]);
  });

  test("one check block per stack turns the plan-time read's warnings into plan and apply warnings", () => {
    const json = synth((stack) => {
      new ApiToken(stack, "a", { name: "a" });
      new ApiToken(stack, "b", { name: "b" });
    });
    const planTimeRead = Object.keys(json.data.external).find((k) => !k.includes("after-write"))!;
    const after = Object.keys(json.data.external).find((k) => k.includes("after-write"))!;
    const observedName = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const observed = `local.${observedName}`;
    expect(json.locals[observedName]).toBe(`\${data.external.${planTimeRead}.result}`);
    expect(Object.keys(json.check)).toEqual(["gpucloud_api_tokens"]);
    // The plan-time read only: it speaks at plan and apply. An assertion over the reads after the writes would be
    // unknown at plan whenever a token is written ("Check block assertion known after apply").
    expect(json.check.gpucloud_api_tokens.assert).toEqual([
      { condition: `\${lookup(${observed}, "warnings", "") == ""}`, error_message: `\${lookup(${observed}, "warnings", "")}` },
    ]);
    expect(JSON.stringify(json.check)).not.toContain(after);
    // Check blocks need Terraform 1.5.
    expect(json.terraform.required_version).toBe(">= 1.5.0");
  });

  test("a value first referred to while the stack is synthesized reads what an early reference reads, never empty", () => {
    // The read after the writes reads every token the plan found no id for whole: nothing needs to be told at synthesis.
    const json = synth((stack) => {
      const late = new ApiToken(stack, "late", { name: "late-one" });
      const early = new ApiToken(stack, "early", { name: "early-one" });
      new TerraformOutput(stack, "early_value", { value: early.token, sensitive: true });
      new TerraformOutput(stack, "late_value", { value: Lazy.stringValue({ produce: () => late.token }), sensitive: true });
      new TerraformOutput(stack, "late_used", { value: Lazy.numberValue({ produce: () => late.lastUsed }) });
    });
    const attributes = `local.${Object.keys(json.locals).find((k) => k.includes("_attributes_"))}`;
    expect(json.output.early_value.value).toBe(`\${sensitive(${attributes}["t1"]["t1.token"])}`);
    expect(json.output.late_value.value).toBe(`\${sensitive(${attributes}["t0"]["t0.token"])}`);
    expect(json.output.late_used.value).toContain(`${attributes}["t0"]["t0.last_used"]`);
  });

  test("one read after the writes per account: each waits for its own account's writer only, and its tokens' attributes refer to it", () => {
    const prodTokens = new Set<number>();
    const json = synth((stack) => {
      const prod = new GpuCloudAccount(stack, "prod", { envPrefix: "GPUCLOUD_PROD_" });
      for (let i = 0; i < 60; i++) {
        const onProd = i % 3 === 0;
        if (onProd) prodTokens.add(i);
        const token = new ApiToken(stack, `t${i}`, { name: `token-${i}`, account: onProd ? prod : undefined });
        new TerraformOutput(stack, `id${i}`, { value: token.tokenId });
      }
    });
    const externals = json.data.external as Record<string, any>;
    const observedName = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const planTimeRead = Object.entries(externals).find(([k]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(k))![1];
    const slotOfPath = (p: string) =>
      Object.keys(planTimeRead.query)
        .find((k) => k.endsWith(".path") && planTimeRead.query[k] === p)!
        .slice(0, -".path".length);
    expect(Object.keys(json.resource.null_resource).sort()).toEqual(["gpucloud_token_writer", "gpucloud_token_writer_gpucloud_prod"]);
    const reads = Object.entries(externals).filter(([k]) => k.includes("after-write"));
    expect(reads).toHaveLength(2);
    const merged: Record<string, string> = {};
    const idKnown = `local.${observedName}["\${k}.id"] != ""`;
    for (const [name, read] of reads) {
      const [writer] = read.depends_on as string[];
      expect(read.depends_on).toHaveLength(1);
      const onProd = writer === "null_resource.gpucloud_token_writer_gpucloud_prod";
      if (!onProd) expect(writer).toBe("null_resource.gpucloud_token_writer");
      const members = Array.from({ length: 60 }, (_, i) => i).filter((i) => prodTokens.has(i) === onProd);
      expect(members).toHaveLength(onProd ? 20 : 40);
      const slots = members.map((i) => slotOfPath(`test/t${i}`));
      // An instance only while the plan-time read has no id for some token of the account (a create, an adoption at apply).
      expect(read.count).toBe(`\${alltrue([for k in ${JSON.stringify(slots)} : ${idKnown}]) ? 0 : 1}`);
      // It reads those only, and lists back from where the plan's walk ended (the ticket), never the whole account again.
      expect(read.query.new_slots).toBe(`\${join(",", [for k in ${JSON.stringify(slots)} : k if !(${idKnown})])}`);
      expect(read.query.after_write).toBe("true");
      expect(read.query.workspace).toBe("${terraform.workspace}");
      expect(read.query.ticket).toBe(`\${local.${observedName}["ticket"]}`);
      expect(Object.keys(read.query)).toHaveLength((onProd ? 4 : 3) * members.length + 4);
      Object.assign(merged, read.query);
      // The account's attributes read this account's read only.
      const attributesName = Object.keys(json.locals).find(
        (k) => /_attributes(-\d+)?_/.test(k) && json.locals[k].includes(`one(data.external.${name}[*].result)`),
      )!;
      // A token the plan-time read found (in sync or updated in place) takes its attributes from it, known at plan.
      expect(json.locals[attributesName]).toBe(
        `\${{for k in ${JSON.stringify(slots)} : k => ${idKnown} ? local.${observedName} : one(data.external.${name}[*].result)}}`,
      );
      members.forEach((i, j) => {
        expect(json.output[`id${i}`].value).toBe(`\${(local.${attributesName}["${slots[j]}"]["${slots[j]}.id"])}`);
      });
    }
    // Together, the accounts' reads ask exactly what the plan-time read asks, less their own fields.
    delete merged.after_write;
    delete merged.new_slots;
    delete merged.ticket;
    expect(merged).toEqual(planTimeRead.query);
  });

  test("leaves the description unmanaged when it is not given", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci" }));
    const writer = only<any>(json.resource.null_resource);
    expect(Object.keys(writer.triggers).sort()).toEqual(["test/ci.in_sync", "test/ci.name"]);
    expect(writer.provisioner[0]["local-exec"].environment.GPUCLOUD_WRITER_PLANNED_0).not.toContain(" d = ");
    for (const data of Object.values<any>(json.data.external)) {
      expect(Object.keys(data.query).filter((k) => k.endsWith(".description"))).toEqual([]);
    }
  });

  test("passes baseUrl to every script: the writer through its environment and an account key of its triggers", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci", baseUrl: "https://api.example.test/v1" }));
    // The default prefix with a base URL of the construct's is another account: its own writer.
    const [[name, writer]] = Object.entries<any>(json.resource.null_resource);
    expect(name).toMatch(/^gpucloud_token_writer_[0-9a-f]{8}$/);
    expect(writer.triggers["account.base_url"]).toBe("https://api.example.test/v1");
    expect(writer.triggers).not.toHaveProperty("account.env_prefix");
    const environment = writer.provisioner[0]["local-exec"].environment;
    expect(environment.GPUCLOUD_WRITER_BASE_URL).toBe("https://api.example.test/v1");
    expect(environment).not.toHaveProperty("GPUCLOUD_WRITER_ENV_PREFIX");
    // Never GPUCLOUD_BASE_URL itself: an empty value from an older state would blank the environment's.
    expect(environment).not.toHaveProperty("GPUCLOUD_BASE_URL");
    const reads = Object.values<any>(json.data.external);
    expect(reads).toHaveLength(2);
    for (const data of reads) expect(data.query["t0.base_url"]).toBe("https://api.example.test/v1");
  });

  test("escapes ${ and %{ in every literal string it writes, so Terraform does not interpolate them", () => {
    const json = synth(
      (stack) =>
        new ApiToken(stack, "ci", {
          name: "n-${x}",
          description: "d-${var.y} %{ if z }",
          previousNames: ["p-${w}"],
          baseUrl: "https://h.test/${v}",
        }),
    );
    const text = JSON.stringify(json);
    // Every occurrence is escaped: no bare ${x}, ${var.y}, ${w}, ${v} or %{ anywhere.
    expect(text).not.toMatch(/[^$]\$\{(x|var\.y|w|v)\}/);
    expect(text).not.toMatch(/[^%]%\{ if z/);
    expect(text.match(/\$\$\{x\}/g)?.length).toBeGreaterThanOrEqual(3);
    const writer = only<any>(json.resource.null_resource);
    expect(writer.triggers["test/ci.name"]).toBe("n-$${x}");
    expect(writer.triggers["test/ci.description"]).toBe("d-$${var.y} %%{ if z }");
    expect(writer.triggers["account.base_url"]).toBe("https://h.test/$${v}");
    expect(writer.provisioner[0]["local-exec"].environment.GPUCLOUD_WRITER_BASE_URL).toBe("https://h.test/$${v}");
    // Literal names reach the writer through its inputs file, never its environment.
    expect(writer.provisioner[0]["local-exec"].environment.GPUCLOUD_WRITER_PLANNED_0).not.toMatch(/ [nd] = /);
    // Previous names are the plan-time read's to resolve.
    const planTimeRead = Object.entries<any>(json.data.external).find(([k]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(k))![1];
    expect(planTimeRead.query["t0.previous.0"]).toBe("p-$${w}");
  });

  test("leaves cdktf tokens in a name as expressions", () => {
    const json = synth((stack) => {
      const v = new TerraformVariable(stack, "suffix", { type: "string" });
      new ApiToken(stack, "ci", { name: `ci-${v.stringValue}-\${lit}` });
    });
    const writer = only<any>(json.resource.null_resource);
    expect(writer.triggers["test/ci.name"]).toBe("ci-${var.suffix}-$${lit}");
    // The plan-time read is not given the name (it would wait for the apply while the name is unknown): it knows the
    // token by its ledger entry. The read after the writes and the writer (from the `given` local) get the name.
    const planTimeRead = Object.entries<any>(json.data.external).find(([k]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(k))![1];
    expect(planTimeRead.query).toEqual({
      "t0.by_ledger": "true",
      "t0.key": expect.any(String),
      "t0.path": "test/ci",
      workspace: "${terraform.workspace}",
    });
    const after = Object.entries<any>(json.data.external).find(([k]) => k.includes("after-write"))![1];
    expect(after.query["t0.name"]).toBe("ci-${var.suffix}-$${lit}");
    const observedName = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const givenName = Object.keys(json.locals).find((k) => k.includes("_given_"))!;
    expect(json.locals[givenName]["test/ci"].n).toBe("ci-${var.suffix}-$${lit}");
    expect(writer.provisioner[0]["local-exec"].environment.GPUCLOUD_WRITER_PLANNED_0).toBe(
      `\${jsonencode({"test/ci" = {i = local.${observedName}["t0.id"], n = local.${givenName}["test/ci"].n, p = local.${givenName}["test/ci"].p}})}`,
    );
    // The plan-time read stays known at plan: the read after the writes has its instance only while an id is unknown.
    expect(after.count).toMatch(/^\$\{alltrue\(/);
  });

  test("exposes attributes from the plan-time read while in sync, else from the read after the writes; the token wrapped in sensitive()", () => {
    const json = synth((stack) => {
      const token = new ApiToken(stack, "ci", { name: "ci" });
      new TerraformOutput(stack, "id", { value: token.tokenId });
      new TerraformOutput(stack, "token", { value: token.token, sensitive: true });
      new TerraformOutput(stack, "created", { value: token.createdAt });
      new TerraformOutput(stack, "used", { value: token.lastUsed });
    });
    // Through the group's local (see the test of the plan-time read for what it holds), by the token's slot.
    const attributes = `local.${Object.keys(json.locals).find((k) => k.includes("_attributes_"))}["t0"]`;
    expect(json.output.id.value).toBe(`\${(${attributes}["t0.id"])}`);
    expect(json.output.token.value).toBe(`\${sensitive(${attributes}["t0.token"])}`);
    expect(json.output.token.sensitive).toBe(true);
    expect(json.output.created.value).toContain("tonumber(");
    expect(json.output.created.value).toContain(`["t0.created_at"]`);
    expect(json.output.used.value).toContain(`["t0.last_used"]`);
    for (const o of Object.values<any>(json.output)) expect(o.value).not.toContain("undefined");
  });

  test("attributes compose with cdktf functions and operators, and are made once", () => {
    const json = synth((stack) => {
      const token = new ApiToken(stack, "ci", { name: "ci" });
      expect(token.tokenId).toBe(token.tokenId);
      new TerraformOutput(stack, "upper", { value: Fn.upper(token.tokenId) });
      new TerraformOutput(stack, "later", { value: Op.add(token.createdAt, 1) });
      new TerraformOutput(stack, "text", { value: `id=${token.tokenId}` });
    });
    expect(json.output.upper.value).toMatch(/^\$\{upper\(\(local\.gpucloud-stack-read_attributes_[0-9A-F]+\["\w+"\]\["\w+\.id"\]\)\)\}$/);
    expect(json.output.later.value).toMatch(/^\$\{\(tonumber\(.*\) \+ 1\)\}$/);
    expect(json.output.text.value).toMatch(/^id=\$\{\(local\..*\)\}$/);
  });

  test("gives each token its own key, and shares one provider, one writer and one script per stack", () => {
    const json = synth((stack) => {
      new ApiToken(stack, "a", { name: "a" });
      new ApiToken(stack, "b", { name: "b" });
    });
    const query = Object.values<any>(json.data.external)[0].query;
    const keys = Object.keys(query)
      .filter((k) => k.endsWith(".key"))
      .map((k) => query[k]);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    expect(Object.keys(json.provider.null)).toHaveLength(1);
    const writer = only<any>(json.resource.null_resource);
    expect(Object.keys(writer.triggers).sort()).toEqual(["test/a.in_sync", "test/a.name", "test/b.in_sync", "test/b.name"]);
    const scripts = new Set(
      [
        writer.provisioner[0]["local-exec"].command.split(" ")[1],
        ...Object.values<any>(json.data.external).map((d) => d.program[1]),
        json.resource.terraform_data.gpucloud_token_roster.provisioner[0]["local-exec"].command.split(" ")[1],
      ].map((p: string) => p.replace(/^\.\//, "")),
    );
    expect(scripts.size).toBe(1);
  });

  describe("reuses the user's own default null/external providers, declared before or after the constructs", () => {
    const declare = (stack: Construct) => {
      new NullProvider(stack, "my-null");
      new ExternalProvider(stack, "my-external");
    };
    test.each([
      ["before", true],
      ["after", false],
    ])("synthScope, declared %s", (_label, before) => {
      const json = JSON.parse(
        Testing.synthScope((stack) => {
          if (before) declare(stack);
          new ApiToken(stack, "ci", { name: "ci" });
          if (!before) declare(stack);
        }),
      );
      expect(json.provider.null).toHaveLength(1);
      expect(json.provider.external).toHaveLength(1);
    });
    test.each([
      ["before", true],
      ["after", false],
    ])("fullSynth, declared %s (cdktf's provider validation passes)", (_label, before) => {
      const stack = new TerraformStack(Testing.app(), "full");
      if (before) declare(stack);
      new ApiToken(stack, "ci", { name: "ci" });
      if (!before) declare(stack);
      const outdir = Testing.fullSynth(stack);
      const json = JSON.parse(readFileSync(path.join(outdir, "stacks", "full", "cdk.tf.json"), "utf8"));
      expect(json.provider.null).toHaveLength(1);
      expect(json.provider.external).toHaveLength(1);
    });
    test("an aliased provider of the user's does not count: the library adds a default one", () => {
      const json = synth((stack) => {
        new ApiToken(stack, "ci", { name: "ci" });
        new NullProvider(stack, "aliased", { alias: "other" });
      });
      expect(json.provider.null).toHaveLength(2);
      expect(json.provider.external).toHaveLength(1);
    });
  });

  test("synthesis walks the construct tree a constant number of times, whatever the number of tokens", () => {
    const walks = (n: number): number => {
      const spy = jest.spyOn(Node.prototype, "findAll");
      try {
        synth((stack) => {
          for (let i = 0; i < n; i++) new ApiToken(stack, `t${i}`, { name: `t-${i}` });
        });
        return spy.mock.calls.length;
      } finally {
        spy.mockRestore();
      }
    };
    expect(walks(40)).toBe(walks(2));
  });

  describe("rejects bad props at synth time, naming the construct and the limit", () => {
    const cases: Array<[string, any, RegExp]> = [
      ["a 51-character name", { name: "x".repeat(51) }, /ApiToken "test\/ci": name must be 1 to 50 characters .*got 51/],
      ["an empty name", { name: "" }, /ApiToken "test\/ci": name must not be blank/],
      ["a white-space name", { name: " \t " }, /ApiToken "test\/ci": name must not be blank or only white space/],
      ["a blank previous name", { name: "ci", previousNames: ["old", "  "] }, /ApiToken "test\/ci": previousNames\[1\] must not be blank/],
      [
        "a 51-character previous name",
        { name: "ci", previousNames: ["y".repeat(51)] },
        /previousNames\[0\] must be 1 to 50 characters .*got 51/,
      ],
      ["a previous name equal to the name", { name: "ci", previousNames: ["ci"] }, /previousNames must not contain the name itself/],
      ["a missing name", {}, /ApiToken "test\/ci": name is required/],
      ["a non-string description", { name: "ci", description: 42 }, /description must be a string/],
      ["a baseUrl with credentials", { name: "ci", baseUrl: "https://u:p@api.example.test" }, /baseUrl must not contain credentials/],
      ["a baseUrl that is not http", { name: "ci", baseUrl: "ftp://api.example.test" }, /baseUrl must be an http/],
      // A malformed URL with a credential: refused without quoting the credential.
      [
        "a baseUrl with a credential and a typo in the scheme",
        { name: "ci", baseUrl: "htps://u:leak-me-7f3@api.example.test" },
        /baseUrl must be an http(?![\s\S]*leak-me-7f3)/,
      ],
      [
        "a baseUrl with a credential that is not a URL",
        { name: "ci", baseUrl: "https://u:leak-me-7f3@api example" },
        /baseUrl must be an http(?![\s\S]*leak-me-7f3)/,
      ],
    ];
    test.each(cases)("%s", (_label, props, message) => {
      expect(() => synth((stack) => new ApiToken(stack, "ci", props))).toThrow(message);
    });

    test("names are counted in Unicode NFC, as Terraform keeps them: 30 decomposed é are 30 characters, 50 × U+0958 are 100", () => {
      const app = Testing.app();
      const stack = new TerraformStack(app, "test");
      const token = new ApiToken(stack, "ci", { name: "e\u0301".repeat(30) });
      expect(token.name).toBe("\u00e9".repeat(30));
      expect(() => synth((s) => new ApiToken(s, "ci", { name: "\u0958".repeat(50) }))).toThrow(/got 100/);
    });

    test("50 characters are counted as characters, not UTF-16 units, with a warning over 50 units", () => {
      expect(() => synth((stack) => new ApiToken(stack, "ci", { name: "🚀".repeat(50) }))).not.toThrow();
      expect(() => synth((stack) => new ApiToken(stack, "ci", { name: "🚀".repeat(51) }))).toThrow(/got 51/);
      const app = Testing.app();
      const stack = new TerraformStack(app, "test");
      const wide = new ApiToken(stack, "wide", { name: "🚀".repeat(30) });
      const narrow = new ApiToken(stack, "narrow", { name: "n".repeat(50) });
      const warnings = (c: any) => c.node.metadata.filter((m: any) => m.type === "@cdktf/warn").map((m: any) => m.data);
      expect(warnings(wide)).toEqual([expect.stringMatching(/ApiToken "test\/wide": name is 30 characters but 60 UTF-16 units/)]);
      expect(warnings(narrow)).toEqual([]);
      const padded = new ApiToken(stack, "padded", { name: " ci " });
      expect(warnings(padded)).toEqual([expect.stringMatching(/ApiToken "test\/padded": name " ci " starts or ends with white space/)]);
    });

    test("two ApiTokens of one stack with the same name fail, naming both paths", () => {
      expect(() =>
        synth((stack) => {
          new ApiToken(stack, "first", { name: "shared" });
          new ApiToken(stack, "second", { name: "shared" });
        }),
      ).toThrow(/ApiToken "test\/second": name "shared" is also the name of ApiToken "test\/first"/);
      expect(() =>
        synth((stack) => {
          new ApiToken(stack, "first", { name: "a", previousNames: ["b"] });
          new ApiToken(stack, "second", { name: "b" });
        }),
      ).toThrow(/ApiToken "test\/second": name "b" is also a previous name of ApiToken "test\/first"/);
      expect(() =>
        synth((stack) => {
          new ApiToken(stack, "first", { name: "a" });
          new ApiToken(stack, "second", { name: "b", previousNames: ["a"] });
        }),
      ).toThrow(/ApiToken "test\/second": previous name "a" is also the name of ApiToken "test\/first"/);
      // The scripts match names after trimming and case-folding, so these would share one token too.
      expect(() =>
        synth((stack) => {
          new ApiToken(stack, "first", { name: "CI" });
          new ApiToken(stack, "second", { name: "ci " });
        }),
      ).toThrow(/ApiToken "test\/second": name "ci " is also the name \("CI" after trimming and case-folding\) of ApiToken "test\/first"/);
      // Two stacks of one app on one account would both adopt one token (see test/constructs/account.test.ts).
      const app = Testing.app();
      new ApiToken(new TerraformStack(app, "one"), "t", { name: "shared" });
      expect(() => new ApiToken(new TerraformStack(app, "two"), "t", { name: "shared" })).toThrow(
        /ApiToken "two\/t": name "shared" is also the name of ApiToken "one\/t": two ApiTokens of one app/,
      );
    });
  });
});

describe("ApiToken full synthesis", () => {
  test("copies the script into the stack folder and writes no secret into it", () => {
    const secrets = {
      GPUCLOUD_USERNAME: "synth-user-7d1f",
      GPUCLOUD_PASSWORD: "synth-password-3b9a1c",
      GPUCLOUD_PASSWORD_MD5: "0123456789abcdef0123456789abcdef",
      GPUCLOUD_API_TOKEN: "eyJhbGciOiJIUzI1NiJ9.synth-api-token.sig",
    };
    const saved = { ...process.env };
    Object.assign(process.env, secrets);
    let outdir: string;
    try {
      const app = new App({ outdir: Testing.app().outdir, skipValidation: false });
      const stack = new TerraformStack(app, "secretless");
      const token = new ApiToken(stack, "ci", { name: "ci", description: "d" });
      new TerraformOutput(stack, "token", { value: token.token, sensitive: true });
      app.synth();
      outdir = app.outdir;
    } finally {
      process.env = saved;
    }
    const stackDir = path.join(outdir, "stacks", "secretless");
    const config = readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8");
    for (const value of Object.values(secrets)) expect(config).not.toContain(value);

    const assetRoot = path.join(stackDir, "assets", "gpucloud-runtime");
    const [hash] = readdirSync(assetRoot);
    const script = readFileSync(path.join(assetRoot, hash, "gpucloud-tf.js"), "utf8");
    expect(script.startsWith("#!/usr/bin/env node")).toBe(true);
    expect(config).toContain(`./assets/gpucloud-runtime/${hash}/gpucloud-tf.js`);
  });
});
