// Compiles the public construct API (the main entry) with jsii in a temporary copy of the
// sources: the jsii check (scripts/jsii-check.mjs) and the API reference (scripts/docgen.mjs)
// both start from this assembly.
//
// Only the main entry is compiled: src/index.ts, src/constructs/** and the runtime modules they
// import (found by following relative imports). The /client, /emulator and /cdktn subpaths are
// Node-only (or a second flavour of the same API) and not meant for jsii.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import cachedInstallModule from "./cached-install.cjs";

const { cachedInstall } = cachedInstallModule;

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const tsVersion = JSON.parse(readFileSync(path.join(root, "node_modules", "typescript", "package.json"), "utf8")).version;
/** jsii's (and jsii-rosetta's) major.minor follows the TypeScript version it embeds. */
export const jsiiRange = `~${tsVersion.split(".").slice(0, 2).join(".")}.0`;

/** A repo tool installed on first use into node_modules/.cache; exits 2 with npm's output when that fails. */
export function toolBinary({ tag, folder, spec, bin, envVar }) {
  if (envVar && process.env[envVar]) return process.env[envVar];
  try {
    return cachedInstall({
      root,
      folder,
      spec,
      bin,
      onInstalled: (seconds) => console.log(`${tag}: installed ${[].concat(spec).join(" ")} in ${seconds.toFixed(1)} s`),
    });
  } catch (e) {
    console.error(`${tag}: ${e.message.split("\n")[0]}${envVar ? `; set ${envVar}` : ""}\n${e.message.split("\n").slice(1).join("\n")}`);
    process.exit(2);
  }
}

// The sources the main entry reaches (relative imports, followed transitively).
function mainEntrySources() {
  const found = new Set();
  const queue = [path.join(root, "src", "index.ts")];
  while (queue.length > 0) {
    const file = queue.pop();
    if (found.has(file)) continue;
    found.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\bfrom\s+["'](\.{1,2}\/[^"']+)["']|\bimport\s+["'](\.{1,2}\/[^"']+)["']/g)) {
      const base = path.resolve(path.dirname(file), m[1] ?? m[2]);
      const hit = [`${base}.ts`, path.join(base, "index.ts")].find((c) => existsSync(c));
      if (!hit) throw new Error(`${path.relative(root, file)}: cannot find ${m[1] ?? m[2]}`);
      queue.push(hit);
    }
  }
  return [...found];
}

/**
 * Copies the main entry's sources into a temporary jsii project and compiles it.
 * Returns { work, ok, output, seconds, types }; the caller removes `work` (see `removeWork`).
 */
export function compileAssembly({ tag, failOnWarnings = false }) {
  const work = mkdtempSync(path.join(os.tmpdir(), "gpucloud-jsii-"));
  for (const file of mainEntrySources()) {
    const dest = path.join(work, path.relative(root, file));
    mkdirSync(path.dirname(dest), { recursive: true });
    cpSync(file, dest);
  }
  mkdirSync(path.join(work, "node_modules", "@types"), { recursive: true });
  for (const dep of ["cdktf", "constructs", "@cdktf/provider-null", "@cdktf/provider-external", "@types/node"]) {
    const link = path.join(work, "node_modules", dep);
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(path.join(root, "node_modules", dep), link, "dir");
  }
  const version = (dep) => JSON.parse(readFileSync(path.join(root, "node_modules", dep, "package.json"), "utf8")).version;
  // jsii wants every jsii dependency both as a dependency and a peer (one copy in a jsii app).
  const jsiiDeps = Object.fromEntries(["cdktf", "constructs", "@cdktf/provider-null", "@cdktf/provider-external"].map((d) => [d, `^${version(d)}`]));
  writeFileSync(
    path.join(work, "package.json"),
    `${JSON.stringify(
      {
        name: pkg.name,
        version: pkg.version,
        description: pkg.description,
        license: pkg.license,
        author: { name: pkg.author ?? "cdktf-gpucloud contributors", url: pkg.homepage, organization: false },
        repository: pkg.repository,
        homepage: pkg.homepage,
        main: "lib/index.js",
        types: "lib/index.d.ts",
        peerDependencies: jsiiDeps,
        devDependencies: { ...Object.fromEntries(Object.keys(jsiiDeps).map((d) => [d, version(d)])), "@types/node": `^${version("@types/node")}` },
        jsii: {
          outdir: "dist",
          // The repository's own compiler settings (esModuleInterop, node16 modules), checked
          // against jsii's "strict" rule set, rather than jsii's generated tsconfig.
          tsconfig: "tsconfig.jsii.json",
          validateTsconfig: "strict",
          targets: {
            python: { distName: "cdktf-gpucloud", module: "cdktf_gpucloud" },
            java: { package: "io.github.cdktf_gpucloud", maven: { groupId: "io.github.cdktf-gpucloud", artifactId: "cdktf-gpucloud" } },
            dotnet: { namespace: "CdktfGpuCloud", packageId: "CdktfGpuCloud" },
            go: { moduleName: "github.com/cdktf-gpucloud/cdktf-gpucloud-go" },
          },
        },
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(path.join(work, "README.md"), "cdktf-gpucloud (jsii copy)\n");
  const repoOptions = JSON.parse(readFileSync(path.join(root, "tsconfig.json"), "utf8")).compilerOptions;
  writeFileSync(
    path.join(work, "tsconfig.jsii.json"),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: "es2022",
          lib: ["es2022"],
          module: "node16",
          moduleResolution: "node16",
          esModuleInterop: true,
          skipLibCheck: true,
          noEmitOnError: true,
          strict: true,
          declaration: true,
          outDir: "lib",
          rootDir: "src",
          types: ["node"],
          noImplicitReturns: repoOptions.noImplicitReturns,
          noFallthroughCasesInSwitch: repoOptions.noFallthroughCasesInSwitch,
          noUnusedLocals: repoOptions.noUnusedLocals,
          noUnusedParameters: repoOptions.noUnusedParameters,
          forceConsistentCasingInFileNames: true,
          isolatedModules: repoOptions.isolatedModules,
          resolveJsonModule: repoOptions.resolveJsonModule,
        },
        include: ["src/**/*.ts"],
      },
      null,
      2,
    )}\n`,
  );

  const jsii = toolBinary({ tag, folder: `jsii-${jsiiRange.slice(1)}`, spec: `jsii@${jsiiRange}`, bin: "jsii", envVar: "JSII_BIN" });
  const started = Date.now();
  const res = spawnSync(jsii, failOnWarnings ? ["--fail-on-warnings"] : [], { cwd: work, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const output = `${res.stdout ?? ""}${res.stderr ?? ""}`.replaceAll(work + path.sep, "");
  const ok = res.status === 0 && existsSync(path.join(work, ".jsii"));
  const types = ok ? Object.keys(JSON.parse(readFileSync(path.join(work, ".jsii"), "utf8")).types ?? {}).sort() : [];
  return { work, ok, status: res.status ?? res.error?.message, output, seconds, types };
}

export function removeWork(work) {
  rmSync(work, { recursive: true, force: true });
}
