/**
 * Runs one command and turns what it throws into a one-line message and the documented exit code
 * (docs/config.md "CLI"): never a stack trace for bad input. A command bundle of dist/ carries its
 * own copy (src/cli/command-bundle.ts), so that `instanceof` meets the error classes the command
 * threw from.
 */
import { isTransientError, isUserError } from "../core/errors.js";
import { EXIT, UsageError, type CliIo, type CommandRun } from "./io.js";

export async function runCommand(
  name: string,
  load: () => Promise<{ run: CommandRun }>,
  args: string[],
  io: CliIo,
): Promise<number> {
  try {
    const { run } = await load();
    return await run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`ferry ${name}: ${error.message}\n`);
      return EXIT.usage;
    }
    // A registry or API that could not be reached is not a bug: its message names it; exit 1 as
    // for any input Ferry could not act on.
    if (isUserError(error) || isTransientError(error)) {
      io.stderr(`ferry ${name}: ${error.message}\n`);
      return EXIT.invalid;
    }
    // Node's parseArgs reports unknown flags and missing values with these codes.
    const code = (error as { code?: string }).code;
    if (
      code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ||
      code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" ||
      code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL"
    ) {
      io.stderr(`ferry ${name}: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    io.stderr(`ferry ${name}: internal error: ${(error as Error).message}\n`);
    return EXIT.invalid;
  }
}
