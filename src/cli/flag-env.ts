/**
 * Flags from the environment, for a command whose settings come from a ConfigMap
 * (`ferry reconcile` in deploy/reconciler): each flag not on the command line may be given as
 * `<PREFIX><FLAG>`, the flag's name upper-cased with `-` as `_` (`--github-repo` →
 * `FERRY_RECONCILE_GITHUB_REPO`). The command line always wins; the flags stay the one definition.
 */
import { UsageError } from "./io.js";

export interface FlagSpec {
  type: "string" | "boolean";
  multiple?: boolean;
}

export function envNameOf(prefix: string, flag: string): string {
  return prefix + flag.toUpperCase().replaceAll("-", "_");
}

/**
 * The arguments the environment adds: `--flag=value` for a string, `--flag` for a boolean set to
 * `true` (`false` adds nothing), one `--flag=value` per comma-separated item of a repeatable flag.
 */
export function argsFromEnv(
  options: Record<string, FlagSpec>,
  args: readonly string[],
  env: Record<string, string | undefined>,
  prefix: string,
): string[] {
  const added: string[] = [];
  for (const [flag, spec] of Object.entries(options)) {
    const name = envNameOf(prefix, flag);
    const value = env[name];
    if (value === undefined || value === "") continue;
    if (args.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`))) continue;
    if (spec.type === "boolean") {
      if (value !== "true" && value !== "false")
        throw new UsageError(`${name} must be true or false, got ${JSON.stringify(value)}`);
      if (value === "true") added.push(`--${flag}`);
    } else if (spec.multiple) {
      for (const item of value.split(",")) if (item.trim() !== "") added.push(`--${flag}=${item.trim()}`);
    } else {
      added.push(`--${flag}=${value}`);
    }
  }
  return added;
}
