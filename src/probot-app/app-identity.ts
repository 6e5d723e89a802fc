import type { AppLogger } from "../app/app-deps.js";

/**
 * The app's own login (`<slug>[bot]`), which decides which PRs, commits and issues are Ferry's
 * (docs/security.md): looked up once with the app's JWT (`GET /app`), and again after a failure.
 * Every entry path (webhook events, registry hints, the periodic scan) waits for it before any use
 * case runs, so that no work decides with the login unknown (docs/reliability.md row 81).
 */
export class AppIdentity {
  #login: string | undefined;
  #source: (() => Promise<string | undefined>) | undefined;
  #lookup: Promise<void> | undefined;

  constructor(private readonly log: () => AppLogger) {}

  /** `<slug>[bot]`, once a lookup succeeded. */
  get login(): string | undefined {
    return this.#login;
  }

  /** Where the login comes from, once Probot is there. */
  lookUpWith(source: () => Promise<string | undefined>): void {
    this.#source = source;
  }

  /** Resolves once the login is known, or once a lookup failed (said in the log; tried again next time). */
  known(): Promise<void> {
    if (this.#login !== undefined || this.#source === undefined) return Promise.resolve();
    this.#lookup ??= this.#source()
      .then((login) => {
        if (login) this.#login = login;
      })
      .catch((error: unknown) => this.log().warn({ error: (error as Error).message }, "app login unknown"))
      .finally(() => {
        this.#lookup = undefined;
      });
    return this.#lookup;
  }
}
