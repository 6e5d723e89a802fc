/**
 * The ledger of notifications already claimed (docs/config.md "Notifications"): a file on its own
 * ref in the config repository, written by compare-and-swap like the state ref, so that of every
 * replica and every redelivery exactly one claims an event and sends it. It keeps the newest
 * `LEDGER_SIZE` event ids; an event older than that is long delivered. Pure.
 */
export const LEDGER_REF = "refs/ferry/notified";
export const LEDGER_FILE = "notified.json";
export const LEDGER_SIZE = 1000;

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The ids a ledger file holds, newest last; an unreadable file holds none. */
export function ledgerIds(content: string | undefined): string[] {
  if (content === undefined) return [];
  try {
    const data = JSON.parse(content) as { ids?: unknown };
    return Array.isArray(data.ids)
      ? data.ids.filter((id): id is string => typeof id === "string" && ID.test(id))
      : [];
  } catch {
    return [];
  }
}

/** `seen` when `id` is already claimed; otherwise the file with it added (the oldest dropped past the size). */
export function claimInLedger(content: string | undefined, id: string): "seen" | { content: string } {
  const ids = ledgerIds(content);
  if (ids.includes(id)) return "seen";
  const kept = [...ids, id].slice(-LEDGER_SIZE);
  return { content: `${JSON.stringify({ version: 1, ids: kept })}\n` };
}
