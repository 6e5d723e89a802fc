import { compileCodeownersPattern, type PathPattern } from "../patterns/codeowners-pattern.js";
import { PatternError } from "../patterns/engine.js";
import { TEAM_SLUG, USER_LOGIN } from "../config/rights-schema.js";

/**
 * A CODEOWNERS file as GitHub reads it (docs/config.md "Who may promote what"): the first of
 * CODEOWNERS_PATHS on the default branch, under 3 MB; each line a pattern and its owners (`@user`,
 * `@org/team`, or an e-mail address, which Ferry cannot map to a login and leaves out); `#` starts
 * a comment, also after the owners; a line with invalid syntax is skipped; the last matching line
 * decides, and one with no owners leaves the path with none.
 */

/** Where GitHub looks, in this order; the first one present is the file. */
export const CODEOWNERS_PATHS = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"] as const;
/** "CODEOWNERS files must be under 3 MB in size": a larger one is not loaded, by GitHub or Ferry. */
export const MAX_CODEOWNERS_BYTES = 3 * 1024 * 1024 - 1;
/** At most this many rules are read: every path an image's files take is tested against them. */
export const MAX_CODEOWNERS_RULES = 5_000;

export interface Owners {
  users: string[];
  teams: string[];
}

interface Rule extends Owners {
  line: number;
  source: string;
  compiled: PathPattern;
}

export interface Codeowners {
  /** Where it was read from (one of CODEOWNERS_PATHS). */
  path: string;
  rules: Rule[];
  /** Lines skipped as GitHub skips them, with the reason. */
  skipped: { line: number; message: string }[];
}

export class CodeownersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CodeownersError";
  }
}

const EMAIL = /^[^@\s]+@[^@\s]+$/;

/** Parses a CODEOWNERS file; throws CodeownersError (one line) past the size or rule bound. */
export function parseCodeowners(path: string, text: string): Codeowners {
  if (text.length > MAX_CODEOWNERS_BYTES)
    throw new CodeownersError(`${path} is over GitHub's 3 MB limit for CODEOWNERS; it is not loaded`);
  const rules: Rule[] = [];
  const skipped: Codeowners["skipped"] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const parsed = parseLine(line);
    if (typeof parsed === "string") {
      skipped.push({ line: index + 1, message: parsed });
      continue;
    }
    if (rules.length >= MAX_CODEOWNERS_RULES)
      throw new CodeownersError(`${path} has more than ${MAX_CODEOWNERS_RULES} rules, more than Ferry reads`);
    rules.push({ line: index + 1, ...parsed });
  }
  return { path, rules, skipped };
}

/** A line's pattern and owners, or why GitHub would skip it. */
function parseLine(line: string): ({ source: string; compiled: PathPattern } & Owners) | string {
  // The pattern runs to the first whitespace not escaped with `\`.
  let end = 0;
  while (end < line.length && !/\s/.test(line[end]!)) end += line[end] === "\\" ? 2 : 1;
  const source = line.slice(0, end);
  let compiled: PathPattern;
  try {
    compiled = compileCodeownersPattern(source);
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
  const users: string[] = [];
  const teams: string[] = [];
  for (const token of line.slice(end).trim().split(/\s+/)) {
    if (token === "") continue;
    if (token.startsWith("#")) break;
    const name = token.slice(1);
    if (token.startsWith("@") && TEAM_SLUG.test(name)) teams.push(name);
    else if (token.startsWith("@") && USER_LOGIN.test(name)) users.push(name);
    else if (!EMAIL.test(token)) return `${token} is not an owner (@user, @org/team or an e-mail address)`;
  }
  return { source, compiled, users, teams };
}

/** The owners of one repo-relative path: those of the last matching rule (none when it has none). */
export function ownersOf(codeowners: Codeowners, path: string): Owners {
  for (let index = codeowners.rules.length - 1; index >= 0; index--) {
    const rule = codeowners.rules[index]!;
    if (rule.compiled.test(path)) return { users: rule.users, teams: rule.teams };
  }
  return { users: [], teams: [] };
}

/** The owners of any of `paths`, each listed once, sorted. */
export function ownersOfAny(codeowners: Codeowners, paths: string[]): Owners {
  const users = new Set<string>();
  const teams = new Set<string>();
  for (const path of paths) {
    const owners = ownersOf(codeowners, path);
    for (const user of owners.users) users.add(user);
    for (const team of owners.teams) teams.add(team);
  }
  return { users: [...users].sort(), teams: [...teams].sort() };
}
