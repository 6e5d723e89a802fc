/**
 * The secrets a process holds (tokens, passwords, keys) and every form in which one can travel
 * inside a text: as is, URL-encoded, JSON-escaped, and base64 or base64url at any byte offset (so
 * that `Basic base64(user:secret)` is caught without knowing `user`). A registry that echoes the
 * `Authorization` header in an error body must not turn into a token in a PR comment.
 * The base64 forms follow GitHub Actions' secret masking, which registers the base64 of a secret
 * at each of the three byte offsets (actions/runner, docs/adrs/0297-base64-masking-trailing-characters.md)
 * and Jenkins' credentials-binding `Base64SecretPatternFactory`.
 */

export const REDACTED = "[REDACTED]";
/** Shorter values would redact ordinary words; real credentials are far longer. */
const MIN_SECRET_LENGTH = 6;
/** A base64 piece this short could match unrelated text. */
const MIN_ENCODED_LENGTH = 8;

export class SecretRedactor {
  private readonly forms = new Set<string>();
  private readonly secrets = new Set<string>();

  /** Holds `secret` (and each line of a multi-line one, such as a PEM key) from now on. */
  add(secret: string | undefined | null): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    for (const form of secretForms(secret)) this.forms.add(form);
    if (/[\r\n]/.test(secret)) for (const line of secret.split(/\r?\n/)) this.add(line.trim());
  }

  redact(text: string): string {
    if (this.forms.size === 0) return text;
    let result = text;
    // Longest first, so a form that contains another is replaced whole.
    for (const form of [...this.forms].sort((a, b) => b.length - a.length))
      if (result.includes(form)) result = result.split(form).join(REDACTED);
    return result;
  }

  /** Redacts every string inside a JSON-like value (a `/status` answer, log fields). */
  redactDeep<T>(value: T): T {
    if (typeof value === "string") return this.redact(value) as T;
    if (value instanceof Error) {
      const copy = new Error(this.redact(value.message));
      copy.name = value.name;
      if (value.stack) copy.stack = this.redact(value.stack);
      return copy as T;
    }
    if (Array.isArray(value)) return value.map((item) => this.redactDeep(item)) as T;
    if (typeof value === "object" && value !== null && !(value instanceof Date)) {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.redactDeep(item)]),
      ) as T;
    }
    return value;
  }
}

/** The texts that reveal `secret`: raw, URL- and JSON-encoded, base64/base64url at offsets 0, 1 and 2. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  forms.add(encodeURIComponent(secret));
  forms.add(encodeURIComponent(secret).replace(/%20/g, "+"));
  forms.add(JSON.stringify(secret).slice(1, -1));
  const bytes = Buffer.from(secret, "utf8");
  for (let offset = 0; offset < 3; offset += 1) {
    const piece = alignedBase64(bytes, offset);
    if (piece.length < MIN_ENCODED_LENGTH) continue;
    forms.add(piece);
    forms.add(piece.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * The base64 characters that depend only on `bytes` when they start `offset` bytes into a 3-byte
 * group: the whole groups inside the secret, whatever precedes or follows it.
 */
function alignedBase64(bytes: Buffer, offset: number): string {
  const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
  const firstGroup = offset === 0 ? 0 : 1;
  const lastGroup = Math.floor(padded.length / 3);
  if (lastGroup <= firstGroup) return "";
  return padded.subarray(firstGroup * 3, lastGroup * 3).toString("base64");
}
