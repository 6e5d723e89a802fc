/**
 * The `rel="next"` target of a `Link` header (RFC 8288), resolved against the URL of the page
 * that carried it: distribution sends relative links (`</v2/x/tags/list?last=a&n=100>`), some
 * registries absolute ones. Returns undefined when there is no next page.
 */
export function nextLink(header: string | null | undefined, pageUrl: string): URL | undefined {
  if (!header) return undefined;
  for (const part of splitLinks(header)) {
    const match = /^\s*<([^>]*)>(.*)$/s.exec(part);
    if (!match) continue;
    const rels = [...match[2]!.matchAll(/;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/gi)].flatMap((rel) =>
      (rel[1] ?? rel[2] ?? "").toLowerCase().split(/\s+/),
    );
    if (!rels.includes("next")) continue;
    try {
      return new URL(match[1]!, pageUrl);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Splits on commas that separate link-values, not those inside `<…>` or quotes. */
function splitLinks(header: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let index = 0; index < header.length; index += 1) {
    const char = header[index];
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === "<") depth += 1;
    else if (!quoted && char === ">") depth = Math.max(0, depth - 1);
    else if (!quoted && depth === 0 && char === ",") {
      parts.push(header.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(header.slice(start));
  return parts;
}
