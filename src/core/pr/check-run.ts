import type { ReferenceProblem } from "../check/check-references.js";
import type { ConfigProblem } from "../config/load-config.js";
import { shortSha } from "../commit-sha.js";

/** The `ferry/config` check run (docs/architecture.md "GitHub conventions"): annotations on the offending lines. */
export const CONFIG_CHECK_NAME = "ferry/config";
/**
 * Annotations of one check run at most: GitHub takes 50 a request, so these go out in 10 requests
 * (the run, then updates of it); the summary lists every problem.
 */
export const MAX_ANNOTATIONS = 500;

export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  /** Only when start_line equals end_line (GitHub refuses columns otherwise). */
  start_column?: number;
  end_column?: number;
  annotation_level: "failure" | "warning" | "notice";
  message: string;
  title?: string;
}

export interface CheckOutput {
  conclusion: "success" | "failure";
  title: string;
  summary: string;
  annotations: CheckAnnotation[];
}

/**
 * The `ferry/config` output. `problems` are schema errors in `file`: Ferry makes no change until
 * they are fixed, so the check fails. `warnings` are what `ferry check` adds (an image no file of
 * an environment references, an environment file that is not YAML, files that disagree on what
 * runs): Ferry still works for every other image and environment, so the check stays `success`
 * and carries them as `warning` annotations. A green check with warning annotations is what
 * linters on GitHub commonly report; `neutral` renders grey, reads as "did not run", and would
 * not block a merge either.
 */
export function formatConfigCheck(
  file: string,
  problems: ConfigProblem[],
  warnings: ReferenceProblem[] = [],
): CheckOutput {
  if (problems.length > 0) {
    return {
      conclusion: "failure",
      title: `${problems.length} problem${problems.length === 1 ? "" : "s"} in ferry.yml`,
      summary: problems
        .map(
          (problem) =>
            `- line ${problem.line}: ${oneLine(problem.message)}${problem.path ? ` (\`${problem.path.replace(/`/g, "")}\`)` : ""}`,
        )
        .join("\n"),
      annotations: problems.slice(0, MAX_ANNOTATIONS).map((problem) => ({
        ...position(file, problem.line, problem.column),
        annotation_level: "failure",
        message: problem.message,
        ...(problem.path ? { title: problem.path } : {}),
      })),
    };
  }
  const failures = warnings.filter((warning) => warning.level === "failure");
  if (failures.length > 0) {
    return {
      conclusion: "failure",
      title: `${failures.length} problem${failures.length === 1 ? "" : "s"} in the environments' files`,
      summary: warnings
        .map(
          (warning) =>
            `- \`${warning.file.replace(/`/g, "")}:${warning.line}:${warning.column}\` ${oneLine(warning.message)}`,
        )
        .join("\n"),
      annotations: [...failures, ...warnings.filter((warning) => warning.level !== "failure")]
        .slice(0, MAX_ANNOTATIONS)
        .map((warning) => ({
          ...position(warning.file, warning.line, warning.column),
          annotation_level: warning.level ?? "warning",
          message: warning.message,
          title: "ferry check",
        })),
    };
  }
  if (warnings.length > 0) {
    const count = `${warnings.length} warning${warnings.length === 1 ? "" : "s"}`;
    const omitted = warnings.length - MAX_ANNOTATIONS;
    return {
      conclusion: "success",
      title: `ferry.yml is valid, with ${count}`,
      summary: [
        `\`${file}\` is valid. Ferry works, but not for everything it names:`,
        "",
        ...warnings.map(
          (warning) =>
            `- \`${warning.file.replace(/`/g, "")}:${warning.line}:${warning.column}\` ${oneLine(warning.message)}`,
        ),
        ...(omitted > 0 ? ["", `Only the first ${MAX_ANNOTATIONS} are annotated.`] : []),
      ].join("\n"),
      annotations: warnings.slice(0, MAX_ANNOTATIONS).map((warning) => ({
        ...position(warning.file, warning.line, warning.column),
        annotation_level: "warning",
        message: warning.message,
        title: "ferry check",
      })),
    };
  }
  return {
    conclusion: "success",
    title: "ferry.yml is valid",
    summary: `\`${file}\` is valid.`,
    annotations: [],
  };
}

/**
 * One-line annotations with the column: GitHub accepts columns only when start_line equals
 * end_line, and needs positive numbers.
 */
function position(
  path: string,
  line: number,
  column: number,
): Pick<CheckAnnotation, "path" | "start_line" | "end_line" | "start_column" | "end_column"> {
  const start = Math.max(1, line);
  const at = Math.max(1, column);
  return { path, start_line: start, end_line: start, start_column: at, end_column: at };
}

function oneLine(message: string): string {
  return message.replace(/[\r\n]+/g, " ");
}

/** The issue Ferry upserts when the default branch's config is broken. */
export const BROKEN_CONFIG_TITLE = "Ferry: .github/ferry.yml is invalid";

export function formatBrokenConfigIssue(file: string, problems: ConfigProblem[], sha: string): string {
  return [
    `Ferry makes no changes in this repository until \`${file}\` is fixed (commit ${shortSha(sha)}).`,
    "",
    ...problems.map(
      (problem) =>
        `- \`${file}:${problem.line}:${problem.column}\` ${problem.message.replace(/[\r\n]+/g, " ")}`,
    ),
  ].join("\n");
}
