// What `npm publish` would ship: exactly what the exports, the bins and the runtime bundle need,
// and a manifest without install-time scripts.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

import { REPO, run } from "./consumer";

interface PackInfo {
  files: { path: string }[];
}

interface Manifest {
  main: string;
  types: string;
  exports: Record<string, string | Record<string, string>>;
  bin: Record<string, string>;
  typesVersions: Record<string, Record<string, string[]>>;
  scripts: Record<string, string>;
  license: string;
  repository: { url: string };
  homepage: string;
  bugs: { url: string };
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

const manifest = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as Manifest;

// Relative module specifiers in compiled .js (require) and .d.ts (import/export ... from) files.
const SPECIFIER = /(?:\brequire\(\s*|\bimport\(\s*|\bfrom\s+|^\s*import\s+)["'](\.{1,2}\/[^"']*)["']/gm;

/** Every file reachable from `entries` through relative imports (with each module's .js/.d.ts twin), as package-relative paths. */
function closure(entries: string[]): Set<string> {
  const found = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const rel = queue.pop()!;
    if (found.has(rel)) continue;
    const abs = path.join(REPO, rel);
    if (!existsSync(abs)) throw new Error(`${rel} is referenced but was not built`);
    found.add(rel);
    if (!/\.(js|d\.ts)$/.test(rel)) continue;
    // A module ships as a pair: its code and its declarations.
    const twin = rel.endsWith(".d.ts") ? rel.replace(/\.d\.ts$/, ".js") : rel.replace(/\.js$/, ".d.ts");
    if (existsSync(path.join(REPO, twin))) queue.push(twin);
    for (const m of readFileSync(abs, "utf8").matchAll(SPECIFIER)) {
      const base = path.posix.join(path.posix.dirname(rel), m[1]).replace(/\.js$/, "");
      const ext = rel.endsWith(".d.ts") ? ".d.ts" : ".js";
      const candidates = [`${base}${ext}`, `${base}/index${ext}`];
      const hit = candidates.find((c) => existsSync(path.join(REPO, c)));
      if (!hit) throw new Error(`${rel} imports ${m[1]}, found neither of ${candidates.join(", ")}`);
      queue.push(hit);
    }
  }
  return found;
}

function entryPoints(): string[] {
  const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)];
  for (const target of Object.values(manifest.exports)) {
    targets.push(...(typeof target === "string" ? [target] : Object.values(target)));
  }
  for (const map of Object.values(manifest.typesVersions)) for (const list of Object.values(map)) targets.push(...list);
  // The script Terraform runs (the launcher, the script proper, its package.json): a folder
  // found by path at synth time, not imported.
  targets.push("lib/assets/gpucloud-tf.js", "lib/assets/gpucloud-tf-main.js", "lib/assets/package.json");
  return [...new Set(targets.map((t) => path.posix.normalize(t)).filter((t) => t !== "package.json"))];
}

describe("npm pack --dry-run", () => {
  let files: string[];
  beforeAll(() => {
    const res = run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], REPO);
    files = (JSON.parse(res.stdout) as PackInfo[])[0].files.map((f) => f.path).sort();
  });

  test("ships the license, the readme, the changelog, the manifest and every file the entry points reach", () => {
    for (const f of [
      "LICENSE",
      "README.md",
      "CHANGELOG.md",
      "package.json",
      "lib/index.js",
      "lib/index.d.ts",
      "lib-cdktn/index.js",
      "lib-cdktn/index.d.ts",
      "lib/assets/gpucloud-tf.js",
      "lib/assets/gpucloud-tf-main.js",
      "lib/emulator/cli.js",
    ]) {
      expect(files).toContain(f);
    }
    const needed = closure(entryPoints());
    expect([...needed].filter((f) => !files.includes(f))).toEqual([]);
  });

  test("ships nothing else: no unexported runtime modules, no sources, no repo tooling", () => {
    const needed = closure(entryPoints());
    const extra = files.filter(
      (f) => !needed.has(f) && !["LICENSE", "README.md", "CHANGELOG.md", "package.json", "lib-cdktn/README.md"].includes(f),
    );
    expect(extra).toEqual([]);
    // Spelled out, for the reader: the script Terraform runs ships only as the bundle (its entry
    // and its commands are not modules anything imports). The contract is lib/protocol/; what the
    // CLI shares with the script is in lib/shared/.
    expect(files.filter((f) => f.startsWith("lib/runtime/"))).toEqual([]);
    expect(files).toContain("lib/protocol/index.js");
    expect(files).toContain("lib/shared/config.js");
    expect(files.filter((f) => /^(src|test|tools|build|examples|scripts|\.ci|lib\/cdktn-bindings)\//.test(f))).toEqual([]);
  });

  test("every exported subpath has a typesVersions entry (node10 resolution)", () => {
    const subpaths = Object.keys(manifest.exports)
      .filter((k) => k !== "." && k !== "./package.json")
      .map((k) => k.slice(2));
    expect(Object.keys(manifest.typesVersions["*"]).sort()).toEqual(subpaths.sort());
    for (const sub of subpaths) {
      const exported = manifest.exports[`./${sub}`] as Record<string, string>;
      expect(manifest.typesVersions["*"][sub]).toEqual([exported.types.replace(/^\.\//, "")]);
    }
  });
});

describe("published manifest", () => {
  test("consumers get no install-time script; the build runs on prepack", () => {
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(manifest.scripts[hook]).toBeUndefined();
    // A clean build: no stale module from an earlier build can ship.
    expect(manifest.scripts.prepack).toMatch(/rmSync\(d, \{ recursive: true, force: true \}\).* && npm run build$/);
    // `npm test` (what .ci/run and the README call after `npm ci`) still builds first.
    expect(manifest.scripts.pretest).toMatch(/npm run build/);
  });

  test("license, repository, homepage and bugs", () => {
    expect(manifest.license).toBe("Apache-2.0");
    const license = readFileSync(path.join(REPO, "LICENSE"), "utf8");
    expect(license).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    expect(license).toMatch(/END OF TERMS AND CONDITIONS/);
    expect(manifest.repository.url).toMatch(/^git\+https:\/\/github\.com\/.+\.git$/);
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.bugs.url).toMatch(/^https:\/\/.+\/issues$/);
  });

  test("cdktf and cdktn are both optional peers; constructs is required", () => {
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(["cdktf", "cdktn", "constructs"]);
    expect(manifest.peerDependenciesMeta.cdktf?.optional).toBe(true);
    expect(manifest.peerDependenciesMeta.cdktn?.optional).toBe(true);
    expect(manifest.peerDependenciesMeta.constructs).toBeUndefined();
  });
});
