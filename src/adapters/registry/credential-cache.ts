/**
 * Short-lived registry credentials (an ECR authorization token lives 12 hours) cached per
 * registry: reused until shortly before they expire, fetched once however many requests wait for
 * them, and dropped when the fetch fails or the registry refuses them, so the next request (or
 * the next cycle) fetches again. The values are secrets: the caller registers them with the
 * redactor; this cache never logs.
 */

export interface ExpiringCredentials {
  username: string;
  password: string;
  /** Epoch milliseconds after which the registry refuses them. */
  expiresAt: number;
}

/** Renew this long before expiry (at most half the credential's lifetime). */
export const CREDENTIAL_EARLY_RENEW_MS = 5 * 60_000;

interface Entry {
  promise: Promise<ExpiringCredentials>;
  /** Set once the fetch succeeded. */
  value?: ExpiringCredentials;
  /** When to fetch again; undefined while the fetch runs. */
  renewAt?: number;
}

export class CredentialCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number) {}

  /** The cached credentials of `key`, or the one running fetch, or a new fetch. */
  get(key: string, fetchCredentials: () => Promise<ExpiringCredentials>): Promise<ExpiringCredentials> {
    const entry = this.entries.get(key);
    if (entry && (entry.renewAt === undefined || this.now() < entry.renewAt)) return entry.promise;
    const fetchedAt = this.now();
    const next: Entry = { promise: fetchCredentials() };
    this.entries.set(key, next);
    next.promise.then(
      (credentials) => {
        const lifetime = Math.max(0, credentials.expiresAt - fetchedAt);
        next.value = credentials;
        next.renewAt = fetchedAt + lifetime - Math.min(CREDENTIAL_EARLY_RENEW_MS, lifetime / 2);
      },
      () => {
        if (this.entries.get(key) === next) this.entries.delete(key);
      },
    );
    return next.promise;
  }

  /** The registry refused `credentials`: unless a newer fetch replaced them, the next `get` fetches again. */
  forget(key: string, credentials: ExpiringCredentials): void {
    if (this.entries.get(key)?.value === credentials) this.entries.delete(key);
  }
}
