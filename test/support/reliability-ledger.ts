/**
 * The reliability ledger: every reliability test records what it tried and what it saw, and the
 * suite prints one summary table (requests tried per class, side effects observed, events lost,
 * deletions in fault cases, canary hits; docs/reliability.md "The ledger").
 *
 * Why a JSON-lines file and not an in-memory map or a `zz-summary` test file: vitest 3 runs
 * test files in parallel workers (child processes under the default `forks` pool, worker threads
 * under `threads`), so there is no shared memory, and it orders files by size and past duration,
 * never by name, so a "last" file is not last. Without a config file (no new top-level files)
 * there is no custom reporter or globalSetup either. So each record is appended (O_APPEND, one
 * small write, atomic on POSIX) to a file named after the vitest main process, and every file
 * calls `finishFile` in its `afterAll`: it prints its own rows, and the file that finds every
 * expected file done prints the complete table. Whichever file finishes last prints it, in any
 * order and under any pool. `npm run bench` uses the same figures in memory (`summarise`).
 */
import { appendFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";

export interface Figures {
  /** Inputs, requests, events or fault cases tried. */
  tried: number;
  /** Writes, hints, API mutations or commits observed where the catalogue says there must be none. */
  sideEffects: number;
  /** Events (promotions) that should have had an effect and had none. */
  eventsLost: number;
  /** Deletions made by the reconciler in fault cases. */
  deletions: number;
  /** Appearances of a planted canary secret in anything observable. */
  canaryHits: number;
}

/** The reliability files whose figures make the complete summary (an explicit list). */
export const RELIABILITY_FILES = [
  "webhook-intake",
  "injection",
  "registry-client-faults",
  "app-github",
  "reconciler-faults",
] as const;
export type ReliabilityFile = (typeof RELIABILITY_FILES)[number];

type Line =
  { kind: "record"; file: string; klass: string; figures: Figures } | { kind: "done"; file: string };

const EMPTY: Figures = { tried: 0, sideEffects: 0, eventsLost: 0, deletions: 0, canaryHits: 0 };

/** The vitest main process: the parent of a forks-pool worker, the process itself under threads. */
function runId(): string {
  const pid = isMainThread ? process.ppid : process.pid;
  // The start time tells a reused pid apart from the run that used it before (Linux only).
  let started = "";
  try {
    started = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19] ?? "";
  } catch {
    started = "";
  }
  return `${pid}-${started}`;
}

export function ledgerPath(): string {
  return process.env.FERRY_RELIABILITY_LEDGER ?? join(tmpdir(), `ferry-reliability-${runId()}.jsonl`);
}

const local: Line[] = [];

/** Adds figures for one class of the catalogue (several records of one class add up). */
export function record(
  klass: string,
  figures: Partial<Figures>,
  file: ReliabilityFile | "bench" = currentFile,
): void {
  const line: Line = { kind: "record", file, klass, figures: { ...EMPTY, ...figures } };
  local.push(line);
  if (file !== "bench") appendFileSync(ledgerPath(), `${JSON.stringify(line)}\n`);
}

let currentFile: ReliabilityFile = "webhook-intake";
/** Names the file whose records follow (call once at the top of each reliability test file). */
export function ledgerFile(file: ReliabilityFile): void {
  currentFile = file;
}

/** Sums the records by class. */
export function summarise(lines: readonly Line[]): Map<string, Figures> {
  const totals = new Map<string, Figures>();
  for (const line of lines) {
    if (line.kind !== "record") continue;
    const sum = totals.get(line.klass) ?? { ...EMPTY };
    for (const key of Object.keys(EMPTY) as (keyof Figures)[]) sum[key] += line.figures[key];
    totals.set(line.klass, sum);
  }
  return totals;
}

export function formatSummary(totals: Map<string, Figures>, heading: string): string {
  const columns: (keyof Figures)[] = ["tried", "sideEffects", "eventsLost", "deletions", "canaryHits"];
  const width = Math.max(10, ...[...totals.keys()].map((name) => name.length)) + 2;
  const rows = [`${heading}`, `${"class".padEnd(width)}${columns.map((c) => c.padStart(12)).join("")}`];
  const all = { ...EMPTY };
  for (const [name, figures] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    rows.push(`${name.padEnd(width)}${columns.map((c) => String(figures[c]).padStart(12)).join("")}`);
    for (const c of columns) all[c] += figures[c];
  }
  rows.push(`${"TOTAL".padEnd(width)}${columns.map((c) => String(all[c]).padStart(12)).join("")}`);
  return rows.join("\n");
}

function readLedger(): Line[] {
  const path = ledgerPath();
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((text) => text.length > 0)
    .map((text) => JSON.parse(text) as Line);
}

/**
 * Call from `afterAll`: prints this file's figures, marks it done, and prints the complete
 * summary when every reliability file of this run has finished (then removes the ledger).
 */
export function finishFile(file: ReliabilityFile): void {
  const mine = summarise(local.filter((line) => line.file === file));
  console.log(formatSummary(mine, `reliability figures: ${file}`));
  appendFileSync(ledgerPath(), `${JSON.stringify({ kind: "done", file } satisfies Line)}\n`);
  const lines = readLedger();
  const done = new Set(lines.filter((line) => line.kind === "done").map((line) => line.file));
  if (RELIABILITY_FILES.every((name) => done.has(name))) {
    console.log(formatSummary(summarise(lines), "RELIABILITY SUMMARY (whole suite)"));
    rmSync(ledgerPath(), { force: true });
  }
}
