import type { GeneratedEntry } from "./expand-config.js";

/** At most this many generated entries are listed one per line; the rest are counted. */
export const MAX_LISTED_ENTRIES = 200;

/**
 * The expanded list, as `ferry check`, `ferry plan` and the `ferry/config` check show it: which
 * images and environments were generated, by which rule or set, from what; and which generated
 * entries a written one shadows. Empty when nothing is generated.
 */
export function formatGenerated(
  generated: readonly GeneratedEntry[],
  shadowed: readonly GeneratedEntry[],
  options: { markdown?: boolean } = {},
): string[] {
  if (generated.length === 0 && shadowed.length === 0) return [];
  const code = (text: string): string => (options.markdown ? `\`${text.replace(/`/g, "")}\`` : text);
  const bullet = options.markdown ? "- " : "  ";
  const line = (entry: GeneratedEntry): string =>
    `${bullet}${entry.kind} ${code(entry.name)} from ${code(entry.from)} (${entry.by})`;
  const count = (kind: GeneratedEntry["kind"]) => generated.filter((entry) => entry.kind === kind).length;
  const images = count("image");
  const environments = count("environment");
  const lines = [
    `generated: ${images} image${images === 1 ? "" : "s"}, ${environments} environment${environments === 1 ? "" : "s"}`,
    ...generated.slice(0, MAX_LISTED_ENTRIES).map(line),
  ];
  if (generated.length > MAX_LISTED_ENTRIES)
    lines.push(`${bullet}… and ${generated.length - MAX_LISTED_ENTRIES} more`);
  if (shadowed.length > 0) {
    lines.push(
      `written entries win over ${shadowed.length} generated one${shadowed.length === 1 ? "" : "s"}:`,
    );
    lines.push(...shadowed.slice(0, MAX_LISTED_ENTRIES).map(line));
    if (shadowed.length > MAX_LISTED_ENTRIES)
      lines.push(`${bullet}… and ${shadowed.length - MAX_LISTED_ENTRIES} more`);
  }
  return lines;
}
