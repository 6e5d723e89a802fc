/**
 * `ferry serve` in a process of its own against the GitHub emulator: the soak and the many-apps
 * bench measure its RSS apart from the emulator and the registry in the bench process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { GitHubEmulator } from "../../packages/sandbox/src/github/index.js";
import { REGISTRY_SECRET, SECRET } from "../support/app-e2e-world.js";
import { serveCommand } from "./serve-command.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** The last 20 kB it printed. */
  output: () => string;
}

/**
 * `ferry serve` on `port` (0: any) for the emulator's `app`, the distribution webhook secret set;
 * `env` adds to or overrides its environment, `onOutput` sees everything it prints.
 */
export async function startServe(
  emu: GitHubEmulator,
  app: { id: number; privateKey: string },
  options: { port?: number; env?: Record<string, string>; onOutput?: (chunk: Buffer) => void } = {},
): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [...serveCommand().args, "serve", "--port", String(options.port ?? 0), "--host", "127.0.0.1"],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        APP_ID: String(app.id),
        PRIVATE_KEY: app.privateKey,
        WEBHOOK_SECRET: SECRET,
        GITHUB_API_URL: emu.apiUrl,
        FERRY_REGISTRY_WEBHOOK_DISTRIBUTION: REGISTRY_SECRET,
        LOG_LEVEL: "warn",
        ...options.env,
      },
    },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    options.onOutput?.(chunk);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const url = await new Promise<string>((resolve, reject) => {
    const deadline = setTimeout(
      () => reject(new Error(`ferry serve did not start in 120 s:\n${output}`)),
      120_000,
    );
    child.stdout!.on("data", () => {
      const match = /ferry serving on (\S+)/.exec(output);
      if (match) {
        clearTimeout(deadline);
        resolve(match[1]!);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(deadline);
      reject(new Error(`ferry serve exited (${code}) at start:\n${output}`));
    });
  });
  return { child, url, output: () => output };
}

/** SIGTERM, then SIGKILL after 10 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A process's RSS now and its peak so far (VmHWM, kept by the kernel), in MiB, from /proc. */
export function processMemory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rssMb: kib("VmRSS") / 1024, peakMb: kib("VmHWM") / 1024 };
}
