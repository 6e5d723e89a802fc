import type { ConfigProblem } from "../config/load-config.js";

/** The `ferry/config` check run (DESIGN.md "GitHub conventions"): annotations on the offending lines. */
export const CONFIG_CHECK_NAME = "ferry/config";
/** GitHub accepts at most 50 annotations per request. */
const MAX_ANNOTATIONS = 50;

export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
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

export function formatConfigCheck(file: string, problems: ConfigProblem[]): CheckOutput {
  if (problems.length === 0) {
    return {
      conclusion: "success",
      title: "ferry.yml is valid",
      summary: `\`${file}\` is valid.`,
      annotations: [],
    };
  }
  return {
    conclusion: "failure",
    title: `${problems.length} problem${problems.length === 1 ? "" : "s"} in ferry.yml`,
    summary: problems
      .map(
        (problem) =>
          `- line ${problem.line}: ${problem.message.replace(/[\r\n]+/g, " ")}${problem.path ? ` (\`${problem.path.replace(/`/g, "")}\`)` : ""}`,
      )
      .join("\n"),
    annotations: problems.slice(0, MAX_ANNOTATIONS).map((problem) => ({
      path: file,
      start_line: problem.line,
      end_line: problem.line,
      annotation_level: "failure",
      message: problem.message,
      ...(problem.path ? { title: problem.path } : {}),
    })),
  };
}

/** The issue Ferry upserts when the default branch's config is broken. */
export const BROKEN_CONFIG_TITLE = "Ferry: .github/ferry.yml is invalid";

export function formatBrokenConfigIssue(file: string, problems: ConfigProblem[], sha: string): string {
  return [
    `Ferry makes no changes in this repository until \`${file}\` is fixed (commit ${sha.slice(0, 7)}).`,
    "",
    ...problems.map(
      (problem) =>
        `- \`${file}:${problem.line}:${problem.column}\` ${problem.message.replace(/[\r\n]+/g, " ")}`,
    ),
  ].join("\n");
}
