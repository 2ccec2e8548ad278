import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

import { ExternalProvider } from "@cdktf/provider-external/lib/provider";
import { NullProvider } from "@cdktf/provider-null/lib/provider";
import { App, Fn, Lazy, Op, TerraformOutput, TerraformStack, TerraformVariable, Testing } from "cdktf";
import { type Construct, Node } from "constructs";

import { ApiToken } from "../../src";

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

/** A token's slot in the plan-time read's query: the prefix of the entry `<slot>.key` that holds its key. */
function slotOf(query: Record<string, string>, key: string): string {
  const entry = Object.entries(query).find(([k, v]) => k.endsWith(".key") && v === key);
  if (!entry) throw new Error(`no slot holds key ${key}`);
  return entry[0].slice(0, -".key".length);
}

describe("ApiToken synthesis", () => {
  test("declares the stack's plan-time read, the sync resource and a stack read after the writes that exists only while writing", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci-pipeline", description: "for CI" }));

    const sync = only<any>(json.resource.null_resource);
    const key = sync.triggers.key;
    expect(key).toMatch(/^[0-9a-f]{42}$/);
    expect(sync.triggers).toMatchObject({
      name: "ci-pipeline",
      description: "for CI",
      workspace: "${terraform.workspace}",
      path: "test/ci",
    });
    // Unknown at plan only when the plan-time read says the API differs.
    // Through a local value holding the plan-time read's result (Terraform decodes a data source's result for every expression that reads it).
    const observedName = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const observed = json.locals[observedName];
    expect(observedName).toMatch(/^gpucloud-stack-read_observed_[0-9A-F]+$/);
    expect(observed).toMatch(/^\$\{data\.external\.gpucloud-stack-read_[0-9A-F]+\.result\}$/);
    // The plan-time read's query and result name each token by a short slot (t0, t1, ...); the query maps it to the key.
    expect(sync.triggers.api_in_sync).toBe(
      `\${local.${observedName}["t0.in_sync"] == "true" ? "true" : (timestamp() == "never" ? "never" : "true")}`,
    );
    expect(sync.triggers.api_in_sync).not.toContain("undefined");

    const [create, destroy] = sync.provisioner.map((p: any) => p["local-exec"]);
    expect(create.command).toMatch(/^node \.\/assets\/gpucloud-runtime\/[0-9A-F]+\/gpucloud-tf\.js token-apply$/);
    expect(create.when).toBeUndefined();
    // The triggers as one value (the script spreads them into its variables), and what the plan showed as one
    // more: the run's ticket from the plan-time read, and the id the read found, which consumers were planned with
    // (the create half refuses to end on another token). The destroy half gets the plan time from Terraform:
    // plantimestamp() refers to nothing, so a destroy-time provisioner may use it.
    expect(create.environment).toEqual({
      GPUCLOUD_TOKEN_TRIGGERS: "${jsonencode(self.triggers)}",
      GPUCLOUD_TOKEN_PLANNED: `\${local.${observedName}["ticket"]} \${local.${observedName}["t0.id"]}`,
    });
    expect(destroy.when).toBe("destroy");
    expect(destroy.command).toMatch(/gpucloud-tf\.js token-release$/);
    // Destroy-time provisioners may only reference self and calls that refer to nothing.
    expect(destroy.environment).toEqual({
      GPUCLOUD_TOKEN_TRIGGERS: "${jsonencode(self.triggers)}",
      GPUCLOUD_TOKEN_PLAN_TIME: "${plantimestamp()}",
    });

    const externals = json.data.external;
    expect(Object.keys(externals)).toHaveLength(2);
    const planTimeReadName = Object.keys(externals).find((k) => k.startsWith("gpucloud-stack-read_") && !k.includes("after-write"))!;
    const planTimeRead = externals[planTimeReadName];
    const read = Object.entries<any>(externals).find(([k]) => k.includes("after-write"))![1];
    expect(planTimeRead.program).toEqual(["node", expect.stringMatching(/^\.\/assets\/.*gpucloud-tf\.js$/), "stack-read"]);
    // The plan-time read (literal query: read while planning) puts the plan time into the run's ticket.
    // The path names the construct in the read's errors.
    expect(planTimeRead.query).toEqual({
      "t0.key": key,
      "t0.path": "test/ci",
      "t0.name": "ci-pipeline",
      "t0.description": "for CI",
      workspace: "${terraform.workspace}",
      plan_time: "${plantimestamp()}",
    });
    expect(planTimeRead.depends_on).toBeUndefined();
    expect(read.program[2]).toBe("stack-read");
    // The read after the writes has the run's ticket (from the plan-time read), to share the run's walk and login.
    const { plan_time: _planTime, ...tokensQuery } = planTimeRead.query;
    // listed_slots: none, since the stack refers to no token's value or last use, so the read after a
    // create needs no listing back to it (the run's walk gives the id, name and description).
    expect(read.query).toEqual({
      ...tokensQuery,
      after_write: "true",
      ticket: `\${local.${observedName}["ticket"]}`,
      listed_slots: "",
    });
    expect(read.depends_on).toEqual([expect.stringMatching(/^null_resource\.gpucloud_ci_sync_[0-9A-F]+$/)]);
    expect(observed).toBe(`\${data.external.${planTimeReadName}.result}`);
    // An instance only while the plan-time read found no token (a create, a rename through a hand-off).
    expect(read.count).toBe(`\${alltrue([for k in ["t0"] : local.${observedName}["\${k}.id"] != ""]) ? 0 : 1}`);
    // The token's attributes: one local per group of tokens, the plan-time read's result while it found the token
    // (in sync, or updated in place: known at plan), else the read's.
    const readName = Object.keys(externals).find((k) => k.includes("after-write"))!;
    const attributesName = Object.keys(json.locals).find((k) => k.includes("_attributes_"))!;
    expect(Object.keys(json.locals)).toHaveLength(3);
    expect(json.locals[attributesName]).toBe(
      `\${{for k in ["t0"] : k => local.${observedName}["\${k}.id"] != "" ? local.${observedName} : one(data.external.${readName}[*].result)}}`,
    );
    // The ledger of what the apply managed, in the state: the plan-time read's, and over it the read's after the writes.
    const ledgersName = Object.keys(json.locals).find((k) => k.includes("_ledgers_"))!;
    expect(json.locals[ledgersName]).toBe(
      `\${[jsondecode(local.${observedName}["ledger"]), try(jsondecode(one(data.external.${readName}[*].result)["ledger"]), {a = {}, t = {}})]}`,
    );
    expect(json.output.gpucloud_token_ledger.value).toBe(
      `\${jsonencode({a = merge([for l in local.${ledgersName} : l.a]...), t = merge([for l in local.${ledgersName} : l.t]...), v = 1})}`,
    );

    expect(json.provider.null).toBeDefined();
    expect(json.provider.external).toBeDefined();
  });

  test("N tokens share one stack read; each has its own fields in its query", () => {
    const json = synth((stack) => {
      for (let i = 0; i < 5; i++) new ApiToken(stack, `t${i}`, { name: `token-${i}`, previousNames: [`old-${i}`] });
    });
    const inventories = Object.keys(json.data.external).filter((k) => k.startsWith("gpucloud-stack-read") && !k.includes("after-write"));
    expect(inventories).toHaveLength(1);
    expect(Object.keys(json.data.external)).toHaveLength(2);
    const after = Object.entries<any>(json.data.external).find(([k]) => k.includes("after-write"))![1];
    expect(after.depends_on).toHaveLength(5);
    const query = json.data.external[inventories[0]].query;
    expect(Object.keys(query)).toHaveLength(22);
    expect(query.workspace).toBe("${terraform.workspace}");
    const slots = new Set<string>();
    for (const sync of Object.values<any>(json.resource.null_resource)) {
      const slot = slotOf(query, sync.triggers.key);
      slots.add(slot);
      expect(query[`${slot}.name`]).toBe(sync.triggers.name);
      expect(query[`${slot}.previous.0`]).toBe(sync.triggers.name.replace("token", "old"));
      expect(query[`${slot}.path`]).toBe(sync.triggers.path);
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

  test("a value first referred to while the stack is synthesized fails synthesis, naming the field, rather than read as empty", () => {
    expect(() =>
      synth((stack) => {
        const token = new ApiToken(stack, "late", { name: "late-one" });
        new TerraformOutput(stack, "late_value", { value: Lazy.stringValue({ produce: () => token.token }), sensitive: true });
      }),
    ).toThrow(/an ApiToken's token was first referred to while the stack was being synthesized/);
  });

  test("a read after the writes per group of 25 tokens: each waits for its own tokens only, and their attributes refer to it", () => {
    // Every third token's value and the last use of token 1 are referred to: their slots need the API's listing.
    const listed = new Set<number>([1]);
    const json = synth((stack) => {
      for (let i = 0; i < 60; i++) {
        const token = new ApiToken(stack, `t${i}`, { name: `token-${i}` });
        new TerraformOutput(stack, `id${i}`, { value: token.tokenId });
        if (i % 3 === 0) {
          listed.add(i);
          new TerraformOutput(stack, `value${i}`, { value: token.token, sensitive: true });
        }
        if (i === 1) new TerraformOutput(stack, "used1", { value: token.lastUsed });
      }
    });
    const externals = json.data.external as Record<string, any>;
    const observedName = Object.keys(json.locals).find((k) => k.includes("_observed_"))!;
    const groupNumber = (name: string) => Number(/after-write(?:-(\d+))?_/.exec(name)?.[1] ?? 1);
    const reads = Object.entries(externals)
      .filter(([k]) => k.includes("after-write"))
      .sort(([a], [b]) => groupNumber(a) - groupNumber(b));
    expect(reads.map(([, read]) => read.depends_on.length)).toEqual([25, 25, 10]);
    const syncs = json.resource.null_resource as Record<string, any>;
    const syncOf = (i: number) => Object.keys(syncs).find((k) => k.startsWith(`gpucloud_t${i}_sync_`))!;
    const merged: Record<string, string> = {};
    reads.forEach(([name, read], g) => {
      const members = Array.from({ length: read.depends_on.length }, (_, j) => g * 25 + j);
      expect(read.depends_on).toEqual(members.map((i) => `null_resource.${syncOf(i)}`));
      const keys = members.map((i) => syncs[syncOf(i)].triggers.key);
      const slots = keys.map((k) => slotOf(read.query, k));
      // An instance only while the plan-time read has no id for some token of the group (a create, a hand-off rename).
      const idKnown = `local.${observedName}["\${k}.id"] != ""`;
      expect(read.count).toBe(`\${alltrue([for k in ${JSON.stringify(slots)} : ${idKnown}]) ? 0 : 1}`);
      expect(read.query.after_write).toBe("true");
      expect(read.query.workspace).toBe("${terraform.workspace}");
      // Of the slots the plan-time read found no id for, those whose value or last use the stack refers to.
      const listedSlots = members.filter((i) => listed.has(i)).map((i) => slots[i - g * 25]);
      expect(read.query.listed_slots).toBe(`\${join(",", [for k in ${JSON.stringify(listedSlots)} : k if !(${idKnown})])}`);
      // The run's ticket, which the plan-time read made: this read takes the run's walk and login, never another run's.
      expect(read.query.ticket).toBe(`\${local.${observedName}["ticket"]}`);
      expect(Object.keys(read.query)).toHaveLength(3 * keys.length + 4);
      Object.assign(merged, read.query);
      // The group's attributes read this group's read only.
      const attributesName = Object.keys(json.locals).find((k) =>
        k.startsWith(`gpucloud-stack-read_attributes${g === 0 ? "" : `-${g + 1}`}_`),
      )!;
      // A token the plan-time read found (in sync or updated in place) takes its attributes from it, known at plan.
      expect(json.locals[attributesName]).toContain(
        `in [${slots.map((k) => `"${k}"`).join(",")}] : k => ${idKnown} ? local.${observedName} : `,
      );
      expect(json.locals[attributesName]).toContain(`one(data.external.${name}[*].result)`);
      for (const i of members) {
        const slot = slotOf(read.query, syncs[syncOf(i)].triggers.key);
        expect(json.output[`id${i}`].value).toBe(`\${(local.${attributesName}["${slot}"]["${slot}.id"])}`);
      }
    });
    // Together, the groups ask exactly what the plan-time read asks, less its run fields.
    delete merged.after_write;
    delete merged.listed_slots;
    delete merged.ticket;
    const { plan_time: _planTime, ...tokensQuery } = Object.entries(externals).find(([k]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(k))![1]
      .query;
    expect(merged).toEqual(tokensQuery);
  });

  test("leaves the description unmanaged when it is not given", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci" }));
    const sync = only<any>(json.resource.null_resource);
    expect(sync.triggers).not.toHaveProperty("description");
    expect(sync.provisioner[0]["local-exec"].environment).not.toHaveProperty("GPUCLOUD_TOKEN_DESCRIPTION");
    for (const data of Object.values<any>(json.data.external)) expect(data.query).not.toHaveProperty("description");
  });

  test("passes baseUrl to every script, the destroy side through the triggers", () => {
    const json = synth((stack) => new ApiToken(stack, "ci", { name: "ci", baseUrl: "https://api.example.test/v1" }));
    const sync = only<any>(json.resource.null_resource);
    expect(sync.triggers.base_url).toBe("https://api.example.test/v1");
    // Both provisioners read it from the triggers (GPUCLOUD_TOKEN_TRIGGERS).
    for (const p of sync.provisioner) {
      expect(p["local-exec"].environment).toMatchObject({ GPUCLOUD_TOKEN_TRIGGERS: "${jsonencode(self.triggers)}" });
    }
    expect(JSON.stringify(sync.provisioner)).not.toContain("GPUCLOUD_TOKEN_BASE_URL");
    // Never GPUCLOUD_BASE_URL itself: an empty value from an older state would blank the environment's.
    for (const p of sync.provisioner) expect(p["local-exec"].environment).not.toHaveProperty("GPUCLOUD_BASE_URL");
    for (const [name, data] of Object.entries<any>(json.data.external)) {
      const baseUrl = name.startsWith("gpucloud-stack-read")
        ? data.query[`${slotOf(data.query, sync.triggers.key)}.base_url`]
        : data.query.base_url;
      expect(baseUrl).toBe("https://api.example.test/v1");
    }
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
    const sync = only<any>(json.resource.null_resource);
    expect(sync.triggers.name).toBe("n-$${x}");
    expect(sync.triggers.description).toBe("d-$${var.y} %%{ if z }");
    expect(sync.triggers.base_url).toBe("https://h.test/$${v}");
    expect(sync.provisioner[0]["local-exec"].environment.GPUCLOUD_TOKEN_PREVIOUS_NAMES).toBe('["p-$${w}"]');
  });

  test("leaves cdktf tokens in a name as expressions", () => {
    const json = synth((stack) => {
      const v = new TerraformVariable(stack, "suffix", { type: "string" });
      new ApiToken(stack, "ci", { name: `ci-${v.stringValue}-\${lit}` });
    });
    expect(only<any>(json.resource.null_resource).triggers.name).toBe("ci-${var.suffix}-$${lit}");
    // Such a read may be deferred to the apply, after destroy halves of its own run: its ticket says so.
    const planTimeRead = Object.entries<any>(json.data.external).find(([k]) => /^gpucloud-stack-read_[0-9A-F]+$/.test(k))![1];
    expect(planTimeRead.query).toMatchObject({ plan_time: "${plantimestamp()}", may_run_at_apply: "true" });
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

  test("gives each token its own key, and shares one provider and one script per stack", () => {
    const json = synth((stack) => {
      new ApiToken(stack, "a", { name: "a" });
      new ApiToken(stack, "b", { name: "b" });
    });
    const keys = Object.values<any>(json.resource.null_resource).map((r) => r.triggers.key);
    expect(new Set(keys).size).toBe(2);
    expect(Object.keys(json.provider.null)).toHaveLength(1);
    const commands = new Set(
      Object.values<any>(json.resource.null_resource).map((r) => r.provisioner[0]["local-exec"].command.split(" ")[1]),
    );
    expect(commands.size).toBe(1);
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
