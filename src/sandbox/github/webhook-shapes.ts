/**
 * Webhook payloads reuse the REST builders, but GitHub's webhook schemas differ in places
 * (stricter property sets, push events' Unix-time repository dates). This adapts a payload
 * built from REST shapes to what the event actually carries.
 */
export function toWebhookPayload(event: string, payload: Record<string, unknown>): Record<string, unknown> {
  const result = structuredClone(payload);
  const repository = result.repository as Record<string, unknown> | undefined;
  if (repository) {
    // Push events carry the repository's dates as Unix seconds (a long-standing GitHub quirk).
    if (event === "push") {
      for (const field of ["created_at", "pushed_at"]) {
        const value = repository[field];
        if (typeof value === "string") repository[field] = Math.floor(new Date(value).getTime() / 1000);
      }
    }
  }
  return result;
}
