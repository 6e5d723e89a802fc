/** A request refused before or while its body was read: the status and a fixed, generic reason. */
export class RequestRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly headers: Record<string, string> = {},
    /** Refused part-way through the body: the rest is never read, the connection is closed. */
    readonly midBody = false,
  ) {
    super(reason);
  }
}
