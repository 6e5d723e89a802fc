/**
 * A line diff and its unified form (`--- a`, `+++ b`, `@@ -l,n +l,n @@` hunks with three lines of
 * context, as `diff -u` and git print them). Myers' O((N+M)·D) algorithm on what is left after the
 * common head and tail are cut off, with D capped: past the cap the middle is shown as removed then
 * added (still a correct diff, found in linear time), so an untrusted render cannot make the diff
 * quadratic. docs/diff.md "Bounds".
 */

export type EditOp = " " | "-" | "+";
export interface Edit {
  op: EditOp;
  line: string;
}

export interface LineDiffLimits {
  /** Most edits Myers' search looks for before falling back to remove-all/add-all of the middle. */
  maxEditDistance: number;
  /**
   * Steps Myers' search may take, shared by every diff that is given the same object (an
   * environment's budget); once spent, diffs take the linear fallback.
   */
  budget?: { remaining: number };
}

export const DEFAULT_LINE_DIFF_LIMITS: LineDiffLimits = { maxEditDistance: 1000 };

/** The edits that turn `a` into `b`, in order. */
export function diffLines(
  a: readonly string[],
  b: readonly string[],
  limits: LineDiffLimits = DEFAULT_LINE_DIFF_LIMITS,
): Edit[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail += 1;
  const edits: Edit[] = [];
  for (let i = 0; i < head; i += 1) edits.push({ op: " ", line: a[i]! });
  const middleA = a.slice(head, a.length - tail);
  const middleB = b.slice(head, b.length - tail);
  const middle = myers(middleA, middleB, limits.maxEditDistance, limits.budget) ?? [
    ...middleA.map((line): Edit => ({ op: "-", line })),
    ...middleB.map((line): Edit => ({ op: "+", line })),
  ];
  edits.push(...middle);
  for (let i = a.length - tail; i < a.length; i += 1) edits.push({ op: " ", line: a[i]! });
  return edits;
}

/** Myers' greedy shortest edit script, or undefined when it needs more than `maxD` edits. */
function myers(
  a: readonly string[],
  b: readonly string[],
  maxD: number,
  budget: { remaining: number } = { remaining: Number.POSITIVE_INFINITY },
): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0)
    return [...a.map((line): Edit => ({ op: "-", line })), ...b.map((line): Edit => ({ op: "+", line }))];
  const max = Math.min(n + m, maxD);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds v[-d..d] as it was before step d: enough to walk the path back (O(D²) memory).
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d += 1) {
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      budget.remaining -= 1;
      if (budget.remaining < 0) return undefined;
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
        budget.remaining -= 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, d);
    }
  }
  return undefined;
}

function backtrack(a: readonly string[], b: readonly string[], trace: Int32Array[], last: number): Edit[] {
  const reversed: Edit[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = last; d > 0; d -= 1) {
    const before = trace[d]!;
    const at = (k: number) => before[k + d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x -= 1;
      y -= 1;
      reversed.push({ op: " ", line: a[x]! });
    }
    if (prevK === k + 1) {
      y -= 1;
      reversed.push({ op: "+", line: b[y]! });
    } else {
      x -= 1;
      reversed.push({ op: "-", line: a[x]! });
    }
  }
  while (x > 0 && y > 0) {
    x -= 1;
    y -= 1;
    reversed.push({ op: " ", line: a[x]! });
  }
  return reversed.reverse();
}

/** How a capped diff ends: `… 12 more diff lines not shown`. */
export const MORE_LINES = "more diff lines not shown";

export interface UnifiedOptions {
  /** Lines of context around each change (3, as `diff -u`). */
  context?: number;
  /** Most hunk lines printed; the rest is counted in one closing line. */
  maxLines?: number;
  /** Longer lines are cut, with `…` at the cut. */
  maxLineChars?: number;
}

/** `--- from` / `+++ to` and the hunks of `edits`; "" when nothing changed. */
export function unifiedDiff(edits: readonly Edit[], from: string, to: string, options: UnifiedOptions = {}) {
  const context = options.context ?? 3;
  const maxLines = options.maxLines ?? Number.POSITIVE_INFINITY;
  const maxLineChars = options.maxLineChars ?? Number.POSITIVE_INFINITY;
  const changed: number[] = [];
  edits.forEach((edit, index) => {
    if (edit.op !== " ") changed.push(index);
  });
  if (changed.length === 0) return "";
  // Hunks: runs of changes whose context overlaps (closer than 2·context unchanged lines).
  const hunks: [number, number][] = [];
  for (const index of changed) {
    const start = Math.max(0, index - context);
    const end = Math.min(edits.length, index + context + 1);
    const last = hunks[hunks.length - 1];
    if (last && start <= last[1]) last[1] = end;
    else hunks.push([start, end]);
  }
  // Line numbers before each edit, in a and b.
  const lineA = new Int32Array(edits.length + 1);
  const lineB = new Int32Array(edits.length + 1);
  edits.forEach((edit, index) => {
    lineA[index + 1] = lineA[index]! + (edit.op === "+" ? 0 : 1);
    lineB[index + 1] = lineB[index]! + (edit.op === "-" ? 0 : 1);
  });
  const out = [`--- ${from}`, `+++ ${to}`];
  let printed = 0;
  let hidden = 0;
  const cut = (line: string) => (line.length > maxLineChars ? `${line.slice(0, maxLineChars)}…` : line);
  for (const [start, end] of hunks) {
    if (printed >= maxLines) {
      hidden += end - start;
      continue;
    }
    const countA = lineA[end]! - lineA[start]!;
    const countB = lineB[end]! - lineB[start]!;
    const startA = countA === 0 ? lineA[start]! : lineA[start]! + 1;
    const startB = countB === 0 ? lineB[start]! : lineB[start]! + 1;
    out.push(`@@ -${startA},${countA} +${startB},${countB} @@`);
    for (let index = start; index < end; index += 1) {
      if (printed >= maxLines) {
        hidden += end - index;
        break;
      }
      out.push(`${edits[index]!.op}${cut(edits[index]!.line)}`);
      printed += 1;
    }
  }
  if (hidden > 0) out.push(`… ${hidden} ${MORE_LINES}`);
  return out.join("\n");
}
