/**
 * The canary-secret harness (docs/reliability.md row 25, goal G10). Tests plant canary values in every
 * credential they hand Ferry (webhook secrets, registry passwords and tokens, GitHub tokens, the
 * app's private key) and scan everything observable — logs, HTTP responses, what Ferry wrote to
 * the GitHub emulator (PR titles and bodies, comments, check runs, commits) — for any of them.
 * A hit is a leak; the suite requires 0.
 *
 * A credential can leak in encoded form too: `Authorization: Basic base64(user:password)`, or the
 * base64 body of a PEM key. `plant` registers those forms as needles with the raw value.
 */
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { Writable } from "node:stream";

export interface CanaryHit {
  where: string;
  needle: string;
  excerpt: string;
}

/** Whole-run marker: one per process, random so no fixture can contain it by accident. */
export const CANARY = `fcan${randomBytes(6).toString("hex")}`;

export class CanaryWatch {
  private readonly needles = new Map<string, string>();
  readonly hits: CanaryHit[] = [];
  /** How many texts were scanned (so a test can show that scanning happened at all). */
  scanned = 0;

  /** A fresh credential containing the canary, registered with its encoded forms. */
  secret(kind: string): string {
    const value = `${kind}-${CANARY}-${randomBytes(4).toString("hex")}`;
    this.plant(value, kind);
    return value;
  }

  /** Registers an existing credential (a generated private key, a token the emulator issued). */
  plant(value: string, label: string): void {
    if (value.length < 8) throw new Error(`canary ${label} is too short to search for`);
    this.needles.set(value, label);
    if (value.includes("-----BEGIN")) {
      // A PEM leaks as any of its base64 lines; the long middle lines are unique to the key.
      for (const line of value.split(/\r?\n/))
        if (/^[A-Za-z0-9+/=]{40,}$/.test(line)) this.needles.set(line, `${label} (PEM line)`);
    } else {
      this.needles.set(Buffer.from(value).toString("base64").replace(/=+$/, ""), `${label} (base64)`);
    }
  }

  /** Registers `user:password` as it travels in a Basic Authorization header. */
  plantBasic(username: string, password: string, label: string): void {
    this.needles.set(
      Buffer.from(`${username}:${password}`).toString("base64").replace(/=+$/, ""),
      `${label} (Basic)`,
    );
  }

  get needleCount(): number {
    return this.needles.size;
  }

  /** Counts the needles found in `text` and remembers where. Returns the number of hits. */
  scan(where: string, text: string | Buffer | undefined | null): number {
    if (text === undefined || text === null) return 0;
    const haystack = typeof text === "string" ? text : text.toString("utf8");
    this.scanned++;
    let found = 0;
    // The bare marker catches partial leaks (a truncated or re-formatted secret).
    const candidates: [string, string][] = [[CANARY, "canary marker"], ...this.needles];
    for (const [needle, label] of candidates) {
      let index = haystack.indexOf(needle);
      while (index !== -1) {
        found++;
        this.hits.push({
          where,
          needle: label,
          excerpt: haystack.slice(Math.max(0, index - 40), index + needle.length + 40),
        });
        index = haystack.indexOf(needle, index + needle.length);
      }
    }
    return found;
  }

  /** A writable sink (for a pino logger or any stream) whose every chunk is scanned. */
  sink(where: string, keep?: string[]): Writable {
    return new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        const text = chunk.toString("utf8");
        keep?.push(text);
        this.scan(where, text);
        callback();
      },
    });
  }

  /** Scans console output (all levels) while `capture` is active; returns the restore function. */
  captureConsole(where = "console"): () => void {
    const methods = ["log", "info", "warn", "error", "debug", "trace"] as const;
    const originals = methods.map((method) => console[method]);
    for (const method of methods) {
      const original = console[method];
      console[method] = (...args: unknown[]) => {
        this.scan(
          `${where}.${method}`,
          args.map((arg) => (typeof arg === "string" ? arg : safeStringify(arg))).join(" "),
        );
        original.apply(console, args);
      };
    }
    return () => methods.forEach((method, index) => (console[method] = originals[index]!));
  }

  /** Scans every commit message and every changed line of a bare (or normal) git repository. */
  scanGit(where: string, gitDir: string): void {
    const log = execFileSync(
      "git",
      ["--git-dir", gitDir, "log", "--all", "-p", "--format=%H%n%an <%ae>%n%B"],
      {
        maxBuffer: 256 * 1024 * 1024,
      },
    );
    this.scan(where, log);
  }

  /** Scans any in-memory structure (emulator metadata: issues, comments, check runs…). */
  scanObject(where: string, value: unknown): void {
    this.scan(where, safeStringify(value));
  }
}

/** JSON with Maps and Sets expanded, cycles and key objects skipped. */
export function safeStringify(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(value, (_key, inner: unknown) => {
        if (inner instanceof Map) return Object.fromEntries(inner);
        if (inner instanceof Set) return [...inner];
        if (Buffer.isBuffer(inner)) return inner.toString("utf8");
        if (inner && typeof inner === "object") {
          if (seen.has(inner)) return "[cycle]";
          seen.add(inner);
          if (inner.constructor?.name === "KeyObject") return "[key]";
        }
        if (typeof inner === "bigint") return inner.toString();
        return inner;
      }) ?? ""
    );
  } catch {
    return String(value);
  }
}
