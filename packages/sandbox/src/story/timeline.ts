/**
 * What the sandbox prints: one line per step with its latency, the summary table of the
 * environments, the endpoints to explore with `--keep`, and the `--json` document
 * (docs/architecture.md "The sandbox"). Pure: data in, text out.
 */
import { shortDigest } from "../../../../src/embedding.js";

export interface StepResult {
  /** Short, stable name (`push`, `staging-pr`, …): what a failure names. */
  name: string;
  ok: boolean;
  /** Latency of the step, measured with performance.now(). */
  ms: number;
  /** What was observed (PR number, digest prefix, versions), or why the step failed. */
  detail: string;
}

export interface EnvironmentSummary {
  environment: string;
  version: string;
  digest: string;
  sync: string;
  health: string;
  held: boolean;
}

export interface SandboxEndpoints {
  /** The GitHub emulator's API base URL (Octokit `baseUrl`); repositories are browsable under it too. */
  github: string;
  repositories: Record<string, string>;
  registry: string;
  cluster: string;
  /** Ferry's `/status`. */
  status: string;
  /** Per sandbox user, a token accepted as `Authorization: token <t>`. */
  tokens: Record<string, string>;
}

export interface SandboxJson {
  steps: StepResult[];
  environments: EnvironmentSummary[];
  endpoints?: SandboxEndpoints;
}

export function formatMs(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function formatStepLine(step: StepResult, index: number, nameWidth = 16): string {
  const mark = step.ok ? "✓" : "✗";
  return `${mark} ${String(index).padStart(2)}. ${step.name.padEnd(nameWidth)} ${formatMs(step.ms).padStart(8)}  ${step.detail}\n`;
}

export function formatSummary(environments: EnvironmentSummary[]): string {
  const header = ["environment", "version", "digest", "sync", "health", "held"];
  const rows = environments.map((env) => [
    env.environment,
    env.version,
    shortDigest(env.digest) || "-",
    env.sync,
    env.health,
    env.held ? "yes" : "no",
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    `${cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd()}\n`;
  return line(header) + line(widths.map((width) => "-".repeat(width))) + rows.map(line).join("");
}

export function formatEndpoints(endpoints: SandboxEndpoints): string {
  const rows: [string, string][] = [
    ["GitHub API", endpoints.github],
    ...Object.entries(endpoints.repositories).map(([name, url]): [string, string] => [`  ${name}`, url]),
    ["registry", endpoints.registry],
    ["cluster", endpoints.cluster],
    ["Ferry /status", endpoints.status],
    // The page (`GET /`) is served beside `/status`, under the same rule.
    ...(endpoints.status.endsWith("/status")
      ? [["Ferry page", endpoints.status.slice(0, -"status".length)] as [string, string]]
      : []),
    ...Object.entries(endpoints.tokens).map(([user, token]): [string, string] => [`token ${user}`, token]),
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}\n`).join("");
}

/** The failed step, or undefined when every step passed. */
export function failedStep(steps: StepResult[]): StepResult | undefined {
  return steps.find((step) => !step.ok);
}

export function toJson(
  steps: StepResult[],
  environments: EnvironmentSummary[],
  endpoints?: SandboxEndpoints,
): SandboxJson {
  return { steps, environments, ...(endpoints ? { endpoints } : {}) };
}
