/** One command as a whole process, for the benches that time processes side by side (startup.ts, plan-renovate.ts). */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";

/** Runs `command` to its end: its wall time in ms and what it printed; throws unless it exits 0. */
export function runWhole(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ ms: number; output: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ ms, output });
      else reject(new Error(`${command} ${args.join(" ")}: exit ${code}: ${output.trim().slice(-2000)}`));
    });
  });
}

/** The middle of `values` (the lower middle of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
