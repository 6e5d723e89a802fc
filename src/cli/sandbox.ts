/**
 * `ferry sandbox`: the command lives in the sandbox package (packages/sandbox/src/command.ts),
 * which only a checkout of Ferry has: the npm package and the image carry no emulator. This file
 * loads it when the command runs; where it is absent (or cannot load, as under plain node from
 * dist/) it says so in one line. From a checkout: `npm ci && npm run sandbox`.
 */
import { EXIT, type CliIo, type CommandRun } from "./io.js";

// A name, not a literal import: the product compiles from src/ alone, without the sandbox package.
const SANDBOX_COMMAND = "@ferry/sandbox/command";

export async function run(args: string[], io: CliIo): Promise<number> {
  let command: { run: CommandRun };
  try {
    command = (await import(SANDBOX_COMMAND)) as { run: CommandRun };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    io.stderr(
      `ferry sandbox: the sandbox cannot load here (${reason}); it runs from a checkout of Ferry, through tsx: ` +
        `npm ci && npm run sandbox\n`,
    );
    return EXIT.invalid;
  }
  return command.run(args, io);
}
