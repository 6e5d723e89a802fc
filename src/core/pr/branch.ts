import { NAME_PATTERN } from "../config/names.js";

/** Ferry's branches: one per environment, `ferry/<env>` (docs/architecture.md "GitHub conventions"). */
const PREFIX = "ferry/";
const ENVIRONMENT = NAME_PATTERN;

export function formatBranchName(environment: string): string {
  if (!ENVIRONMENT.test(environment))
    throw new Error(`invalid environment name ${JSON.stringify(environment)}`);
  return `${PREFIX}${environment}`;
}

/** The environment of a Ferry branch (`ferry/prod` or `refs/heads/ferry/prod`), else undefined. */
export function parseBranchName(ref: string): string | undefined {
  const name = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
  if (!name.startsWith(PREFIX)) return undefined;
  const environment = name.slice(PREFIX.length);
  return ENVIRONMENT.test(environment) ? environment : undefined;
}

export const FERRY_LABEL = "ferry";

/** Labels on every Ferry PR: `ferry` and `env:<env>`. */
export function formatLabels(environment: string): string[] {
  return [FERRY_LABEL, `env:${environment}`];
}

/** The environment named by `env:<env>` among a PR's labels. */
export function parseEnvironmentLabel(labels: string[]): string | undefined {
  const label = labels.find((name) => name.startsWith("env:"));
  const environment = label?.slice("env:".length);
  return environment !== undefined && ENVIRONMENT.test(environment) ? environment : undefined;
}
