import type { Scalar } from "yaml";
import { parseUnique } from "../yaml/unique-keys.js";
import { UserError } from "../errors.js";

/**
 * True when `value` written as a plain scalar would not read back as that same string, under
 * YAML 1.2 (this parser, Helm v3) or YAML 1.1 (go-yaml v2 in older Kubernetes tooling):
 * `1.20` is a number, `yes` a boolean in 1.1, `0x1F` an integer, `null`/`~` null.
 */
export function plainWouldChange(value: string): boolean {
  if (value === "") return true;
  for (const version of ["1.2", "1.1"] as const) {
    let read: unknown;
    try {
      read = parseUnique(value, { version });
    } catch {
      return true;
    }
    if (read !== value) return true;
  }
  return false;
}

/** The source text for `value` in the style of the scalar it replaces (plain, single or double quoted). */
export function renderLike(scalar: Scalar, value: string): string {
  switch (scalar.type) {
    case "QUOTE_SINGLE":
      return `'${value.replaceAll("'", "''")}'`;
    case "QUOTE_DOUBLE":
      return doubleQuoted(value);
    case "PLAIN":
    case undefined:
      return renderPlain(value);
    default:
      // Block scalars (| and >) carry their own line structure; rewriting one is not a splice.
      throw new UserError(
        "unsupported-scalar-style",
        `cannot edit a ${scalar.type} block scalar in place; write the value on one line`,
      );
  }
}

/** A plain scalar when that reads back as the same string, else double-quoted. */
export function renderPlain(value: string): string {
  return plainWouldChange(value) ? doubleQuoted(value) : value;
}

function doubleQuoted(value: string): string {
  // JSON string escapes are valid YAML double-quoted escapes.
  return JSON.stringify(value);
}
