/**
 * The main job (`npm run demo`): deploys the example stack against the bundled API emulator
 * with real Terraform, then shows that a second plan has nothing to do.
 *
 * 1. start the emulator on loopback with a one-off user;
 * 2. synthesize examples/main.ts (the same app `cdktf synth` would run) into a temp folder;
 * 3. `terraform init`: with the real hashicorp/null and hashicorp/external providers when
 *    they can be downloaded, otherwise with the in-repo provider doubles (said which);
 * 4. `terraform apply`, printing the chosen flavor and the token id (never the token value);
 * 5. `terraform plan -detailed-exitcode`, expecting "no changes";
 * 6. clean up: stop the processes, delete the folder.
 *
 * Credentials reach Terraform only through its environment, as in a real pipeline.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { startEmulator } from "cdktf-gpucloud/emulator";

const ROOT = path.resolve(__dirname, "..", "..");
const STACK = "gpu-ci";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function log(line: string): void {
  process.stdout.write(`[demo] ${line}\n`);
}

/** Runs a command, streaming its output (indented) unless quiet, with a hard timeout. */
function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; quiet?: boolean; timeoutMs?: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const echo = (text: string) => {
      if (!opts.quiet) process.stdout.write(text.replace(/^(?=.)/gm, "    "));
    };
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
      echo(c.toString());
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
      echo(c.toString());
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 300_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: stderr + err.message });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts the provider doubles and asks for a reattach map bound to the stack folder. */
async function startDoubles(stackDir: string, env: NodeJS.ProcessEnv): Promise<{ reattach: string; stop: () => void }> {
  const bundle = path.join(ROOT, "build", "tools", "provider-doubles.js");
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build`);
  const child = spawn(process.execPath, [bundle], { env, stdio: ["pipe", "pipe", "inherit"] });
  const lines: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  let buffer = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      const early = lines.shift();
      if (early !== undefined) return resolve(early);
      const timer = setTimeout(() => reject(new Error("the provider doubles did not answer within 20 s")), 20_000);
      waiters.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  await nextLine(); // the process-wide reattach map
  // The external provider runs programs in its own working directory; a provider started by
  // terraform shares terraform's, so ask for a session in the stack folder.
  child.stdin.write(JSON.stringify({ cwd: stackDir, env }) + "\n");
  const reattach = await nextLine();
  return {
    reattach,
    stop: () => {
      child.stdin.end();
      child.kill("SIGTERM");
    },
  };
}

async function main(): Promise<number> {
  const terraform = spawnSync("terraform", ["version"], { encoding: "utf8" });
  if (terraform.status !== 0) {
    log("terraform is not installed (it must be on the PATH); see https://developer.hashicorp.com/terraform/install");
    return 1;
  }
  log(`using ${terraform.stdout.split("\n")[0]}`);

  const password = randomBytes(12).toString("hex");
  const emulator = await startEmulator({ users: [{ username: "demo", password }] });
  log(`emulator listening on ${emulator.url} (user "demo", a one-off password)`);
  const workDir = mkdtempSync(path.join(tmpdir(), "gpucloud-demo-"));
  const cleanups: Array<() => unknown> = [() => emulator.close(), () => rmSync(workDir, { recursive: true, force: true })];

  try {
    // What a pipeline's deploy step has: the API address and credentials in the environment.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GPUCLOUD_BASE_URL: emulator.url,
      GPUCLOUD_USERNAME: "demo",
      GPUCLOUD_PASSWORD: password,
      TF_IN_AUTOMATION: "1",
      CHECKPOINT_DISABLE: "1",
    };

    log("synthesizing examples/main.ts");
    const synth = await run(process.execPath, [path.join(ROOT, "build", "examples", "main.js")], {
      cwd: ROOT,
      env: { ...process.env, CDKTF_OUTDIR: workDir },
      quiet: true,
    });
    const stackDir = path.join(workDir, "stacks", STACK);
    if (synth.code !== 0 || !existsSync(path.join(stackDir, "cdk.tf.json"))) {
      log(`synthesis failed:\n${synth.stderr}`);
      return 1;
    }
    log(`synthesized ${path.join(stackDir, "cdk.tf.json")}`);

    log("terraform init (trying the registry for hashicorp/null and hashicorp/external)");
    let tfEnv = env;
    const realInit = await run("terraform", ["init", "-input=false", "-no-color"], { cwd: stackDir, env, quiet: true, timeoutMs: 120_000 });
    if (realInit.code === 0) {
      log("providers: the real hashicorp/null and hashicorp/external from the registry");
    } else {
      log("the registry cannot be reached; providers: the in-repo offline doubles (tools/provider-doubles)");
      const doubles = await startDoubles(stackDir, env);
      cleanups.unshift(doubles.stop);
      tfEnv = { ...env, TF_REATTACH_PROVIDERS: doubles.reattach };
      const init = await run("terraform", ["init", "-input=false", "-no-color"], { cwd: stackDir, env: tfEnv, quiet: true });
      if (init.code !== 0) {
        log(`terraform init failed:\n${init.stdout}${init.stderr}`);
        return 1;
      }
    }

    log("terraform apply");
    const apply = await run("terraform", ["apply", "-input=false", "-no-color", "-auto-approve"], { cwd: stackDir, env: tfEnv });
    if (apply.code !== 0) {
      log("terraform apply failed");
      return 1;
    }

    const outputs = await run("terraform", ["output", "-json", "-no-color"], { cwd: stackDir, env: tfEnv, quiet: true });
    const values = JSON.parse(outputs.stdout) as Record<string, { value: unknown; sensitive: boolean }>;
    log(
      `chosen flavor: ${String(values.flavor_name?.value)} (id ${String(values.flavor_id?.value)}), ${String(values.flavor_price?.value)} per hour`,
    );
    log(`API token id: ${String(values.token_id?.value)} (its value is a sensitive output and is not printed)`);

    log("terraform plan (second deploy, nothing changed)");
    const plan = await run("terraform", ["plan", "-input=false", "-no-color", "-detailed-exitcode"], {
      cwd: stackDir,
      env: tfEnv,
      quiet: true,
    });
    if (plan.code === 0) {
      log("second plan: no changes");
    } else {
      log(`second plan: unexpected exit code ${String(plan.code)}\n${plan.stdout}${plan.stderr}`);
      return 1;
    }
    log("done; cleaning up");
    return 0;
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
