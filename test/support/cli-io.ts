/**
 * The `CliIo` a test hands to `main(argv, io)`: stdout and stderr kept as text, stdin canned, the
 * working directory, environment and clock given.
 */
import { main } from "../../src/cli.js";
import type { CliIo } from "../../src/cli/io.js";

export interface CapturedIo extends CliIo {
  /** All the command wrote to stdout, in order. */
  out: string;
  /** All the command wrote to stderr, in order. */
  err: string;
}

export interface CaptureOptions {
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
  stdin?: string;
}

export function captureIo(cwd: string, options: CaptureOptions = {}): CapturedIo {
  const io: CapturedIo = {
    out: "",
    err: "",
    stdout: (text) => void (io.out += text),
    stderr: (text) => void (io.err += text),
    readStdin: async () => options.stdin ?? "",
    cwd,
    env: options.env ?? {},
    now: options.now ?? (() => new Date()),
  };
  return io;
}

/** Runs `ferry ARGS` in `cwd` and returns its exit code and output. */
export async function runFerry(
  args: string[],
  cwd: string,
  options: CaptureOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = captureIo(cwd, options);
  const code = await main(args, io);
  return { code, stdout: io.out, stderr: io.err };
}
