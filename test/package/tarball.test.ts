// What `npm publish` would ship: exactly what the exports, the bins and the runtime bundle need,
// and a manifest without install-time scripts.
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { markdownBlocks, userDocs } from "../support/markdown-examples";
import { packLibrary, REPO, run } from "./consumer";

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
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

const manifest = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as Manifest;

// One reading of what the entry points need, for the tests and for prepack's check.
const { closure, entryPoints, problems } = require("../../scripts/pack-check.cjs") as {
  closure(dir: string, entries: string[]): { reached: Set<string>; missing: string[] };
  entryPoints(manifest: Manifest): string[];
  problems(dir: string, files: string[]): string[];
};

/** Every file the manifest's entry points reach in the built tree; none may be missing. */
function needed(): Set<string> {
  const { reached, missing } = closure(REPO, entryPoints(manifest));
  expect(missing).toEqual([]);
  return reached;
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
    expect([...needed()].filter((f) => !files.includes(f))).toEqual([]);
    expect(problems(REPO, files)).toEqual([]);
  });

  test("ships nothing else: no unexported runtime modules, no sources, no repo tooling", () => {
    const reached = needed();
    const extra = files.filter(
      (f) => !reached.has(f) && !["LICENSE", "README.md", "CHANGELOG.md", "package.json", "lib-cdktn/README.md"].includes(f),
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

describe("a package that cannot ship empty", () => {
  const check = path.join(REPO, "scripts", "pack-check.cjs");
  let bare: string;
  beforeAll(() => {
    // A checkout without lib/ and lib-cdktn/: what a clone holds before its first build.
    bare = mkdtempSync(path.join(os.tmpdir(), "gpucloud-bare-"));
    for (const f of ["package.json", "README.md", "LICENSE", "CHANGELOG.md"]) copyFileSync(path.join(REPO, f), path.join(bare, f));
  });
  afterAll(() => rmSync(bare, { recursive: true, force: true }));

  test("npm itself packs such a checkout without a word: four files, exit 0 (why the check exists)", () => {
    const res = run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], bare);
    expect((JSON.parse(res.stdout) as PackInfo[])[0].files.map((f) => f.path).sort()).toEqual([
      "CHANGELOG.md",
      "LICENSE",
      "README.md",
      "package.json",
    ]);
  });

  test("the check fails on it, naming what is missing and what to run", () => {
    const res = spawnSync(process.execPath, [check], { cwd: bare, encoding: "utf8" });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("lib/index.js (named by package.json)");
    expect(res.stderr).toContain("lib-cdktn/index.js (named by package.json)");
    expect(res.stderr).toContain("lib/assets/gpucloud-tf-main.js (named by package.json)");
    expect(res.stderr).toContain("npm run build");
  });

  test("the check passes this built package, and the tarball npm pack makes of it, saying so on stderr only", () => {
    const here = spawnSync(process.execPath, [check], { cwd: REPO, encoding: "utf8" });
    expect([here.status, here.stdout]).toEqual([0, ""]);
    expect(here.stderr).toMatch(/^pack-check: cdktf-gpucloud@\S+: \d+ files, every entry point and the modules it reaches\n$/);
    const dest = mkdtempSync(path.join(os.tmpdir(), "gpucloud-tgz-"));
    try {
      const tgz = spawnSync(process.execPath, [check, packLibrary(dest)], { encoding: "utf8" });
      expect([tgz.status, tgz.stdout]).toEqual([0, ""]);
      expect(tgz.stderr).toMatch(/^pack-check: \S+\.tgz: \d+ files, every entry point and the modules it reaches\n$/);
    } finally {
      rmSync(dest, { recursive: true, force: true });
    }
  });

  test("every package path the README and docs import is an export the package ships", () => {
    const imported = new Set(
      userDocs(REPO)
        .flatMap((file) => markdownBlocks(REPO, file))
        .flatMap((b) => [...b.code.matchAll(/from "(cdktf-gpucloud(?:\/[\w-]+)?)"/g)].map((m) => m[1])),
    );
    expect([...imported].sort()).toEqual(["cdktf-gpucloud", "cdktf-gpucloud/cdktn", "cdktf-gpucloud/client", "cdktf-gpucloud/emulator"]);
    for (const specifier of imported) {
      const exported = manifest.exports[specifier.replace(/^cdktf-gpucloud/, ".")] as Record<string, string>;
      expect([specifier, needed().has(exported.default.replace(/^\.\//, ""))]).toEqual([specifier, true]);
    }
  });
});

// Publishing tools read `npm pack --json`'s stdout as JSON, so prepack (the build, pack-check) must
// print nothing there. prepack deletes and rebuilds lib/, which the other suites read while this
// one runs: it packs a copy of the checkout instead.
describe("npm pack --json, prepack included", () => {
  let copy: string;
  beforeAll(() => {
    copy = mkdtempSync(path.join(os.tmpdir(), "gpucloud-prepack-"));
    const skip = new Set(["node_modules", ".git", "lib", "lib-cdktn", "build", "cdktf.out", ".cache", "coverage"]);
    cpSync(REPO, copy, { recursive: true, filter: (src) => !skip.has(path.relative(REPO, src)) });
    symlinkSync(path.join(REPO, "node_modules"), path.join(copy, "node_modules"), "dir");
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  test("prints only JSON on stdout; the build and the check speak on stderr", () => {
    const res = run("npm", ["pack", "--json", "--dry-run"], copy);
    const [info] = JSON.parse(res.stdout) as (PackInfo & { filename: string })[];
    expect(res.stderr).toMatch(/^pack-check: cdktf-gpucloud@\S+: \d+ files, every entry point/m);
    expect(info.filename).toMatch(/^cdktf-gpucloud-.+\.tgz$/);
    expect(info.files.map((f) => f.path)).toContain("lib/assets/gpucloud-tf-main.js");
  });
});

describe("published manifest", () => {
  test("consumers get no install-time script; prepack builds afresh, then checks the package", () => {
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(manifest.scripts[hook]).toBeUndefined();
    // A clean build (no stale module from an earlier build can ship), then the check above.
    expect(manifest.scripts.prepack).toMatch(
      /rmSync\(d, \{ recursive: true, force: true \}\).* && npm run build 1>&2 && node scripts\/pack-check\.cjs$/,
    );
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

  test("cdktf, cdktn and cdktf's prebuilt providers are optional peers; constructs is required", () => {
    const optional = ["@cdktf/provider-external", "@cdktf/provider-null", "cdktf", "cdktn"];
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual([...optional, "constructs"]);
    for (const name of optional) expect([name, manifest.peerDependenciesMeta[name]?.optional]).toEqual([name, true]);
    expect(manifest.peerDependenciesMeta.constructs).toBeUndefined();
  });

  test("no dependency brings cdktf: npm 7+ installs a dependency's peers (consumer.test.ts installs for real)", () => {
    for (const dep of Object.keys(manifest.dependencies)) {
      const theirs = JSON.parse(readFileSync(path.join(REPO, "node_modules", dep, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      expect([dep, Object.keys({ ...theirs.dependencies, ...theirs.peerDependencies }).filter((n) => /^(cdktf|@cdktf\/)/.test(n))]).toEqual(
        [dep, []],
      );
    }
  });
});
