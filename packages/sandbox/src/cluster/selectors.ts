/**
 * Label and field selectors as `kubectl -l` / `?labelSelector=` write them:
 * `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-joined (AND).
 */
import { badRequest } from "./status.js";

export type LabelRequirement =
  { key: string; op: "exists" | "notexists" } | { key: string; op: "in" | "notin"; values: string[] };

export function parseLabelSelector(text: string | null | undefined): LabelRequirement[] {
  if (!text || !text.trim()) return [];
  const requirements: LabelRequirement[] = [];
  for (const part of splitTopLevel(text)) {
    const term = part.trim();
    if (!term) continue;
    const setMatch = /^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (setMatch) {
      const values = setMatch[3]!
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
      requirements.push({ key: setMatch[1]!, op: setMatch[2] as "in" | "notin", values });
      continue;
    }
    const equality = /^([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(term);
    if (equality) {
      const op = equality[2] === "!=" ? "notin" : "in";
      requirements.push({ key: equality[1]!, op, values: [equality[3]!] });
      continue;
    }
    const existence = /^(!?)([^\s!=()]+)$/.exec(term);
    if (existence) {
      requirements.push({ key: existence[2]!, op: existence[1] ? "notexists" : "exists" });
      continue;
    }
    throw badRequest(`unable to parse requirement: ${JSON.stringify(term)}`);
  }
  return requirements;
}

/** Splits on commas that are not inside `( … )`. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(") depth++;
    if (char === ")") depth--;
    if (char === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

export function matchesLabels(
  labels: Record<string, string> | undefined,
  requirements: LabelRequirement[],
): boolean {
  const actual = labels ?? {};
  return requirements.every((req) => {
    const has = Object.prototype.hasOwnProperty.call(actual, req.key);
    switch (req.op) {
      case "exists":
        return has;
      case "notexists":
        return !has;
      case "in":
        return has && req.values.includes(actual[req.key]!);
      case "notin":
        return !has || !req.values.includes(actual[req.key]!);
    }
  });
}

export interface FieldRequirement {
  path: string;
  value: string;
  negate: boolean;
}

/** Only `metadata.name` and `metadata.namespace` (plus `status.phase`), like most real resources. */
export function parseFieldSelector(text: string | null | undefined): FieldRequirement[] {
  if (!text || !text.trim()) return [];
  return text.split(",").map((term) => {
    const match = /^\s*([\w.]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const path = match[1]!;
    if (!["metadata.name", "metadata.namespace", "status.phase", "spec.nodeName"].includes(path)) {
      throw badRequest(`field label not supported: ${path}`);
    }
    return { path, value: match[3]!, negate: match[2] === "!=" };
  });
}

export function matchesFields(object: Record<string, unknown>, requirements: FieldRequirement[]): boolean {
  return requirements.every((req) => {
    let value: unknown = object;
    for (const segment of req.path.split(".")) {
      value = value && typeof value === "object" ? (value as Record<string, unknown>)[segment] : undefined;
    }
    const actual = value === undefined || value === null ? "" : String(value);
    return req.negate ? actual !== req.value : actual === req.value;
  });
}
