/**
 * Which files SOPS encrypted, by the metadata SOPS writes into every file it encrypts
 * (https://github.com/getsops/sops): a top-level `sops` map holding `mac` and `lastmodified` in
 * YAML and JSON, and `sops_mac=` / `sops_lastmodified=` lines in dotenv. Only these are handed to
 * `sops decrypt` (docs/security.md, "SOPS"). Pure and linear-time: line scans and one JSON.parse,
 * no regular expressions, no YAML parser (the text is untrusted and unbounded in shape).
 */

export type SopsFormat = "yaml" | "json" | "dotenv";

/** The format a file's name says it has, as `sops` itself decides it; undefined for any other file. */
export function sopsFormatOfName(name: string): SopsFormat | undefined {
  const base = name.slice(name.lastIndexOf("/") + 1).toLowerCase();
  if (base.endsWith(".yaml") || base.endsWith(".yml")) return "yaml";
  if (base.endsWith(".json")) return "json";
  if (base.endsWith(".env") || base === ".env") return "dotenv";
  return undefined;
}

/** The file's SOPS format when `text` carries SOPS metadata for the format its name says; else undefined. */
export function sopsEncryptedFormat(name: string, text: string): SopsFormat | undefined {
  const format = sopsFormatOfName(name);
  if (format === undefined || !text.includes("sops")) return undefined;
  const encrypted =
    format === "yaml"
      ? yamlHasMetadata(text)
      : format === "json"
        ? jsonHasMetadata(text)
        : dotenvHasMetadata(text);
  return encrypted ? format : undefined;
}

/** A `sops:` line at column 0 whose indented block has `mac:` and `lastmodified:` (any document). */
function yamlHasMetadata(text: string): boolean {
  let inBlock = false;
  let mac = false;
  let modified = false;
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.startsWith("sops:") && line.slice(5).trim() === "") {
      inBlock = true;
      mac = modified = false;
      continue;
    }
    if (!inBlock) continue;
    if (line.trim() === "") continue;
    if (line[0] !== " " && line[0] !== "\t") {
      if (mac && modified) return true;
      inBlock = false;
      continue;
    }
    const item = line.trimStart();
    if (item.startsWith("mac:")) mac = true;
    if (item.startsWith("lastmodified:")) modified = true;
  }
  return inBlock && mac && modified;
}

function jsonHasMetadata(text: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const sops = (value as Record<string, unknown>).sops;
  if (typeof sops !== "object" || sops === null) return false;
  const metadata = sops as Record<string, unknown>;
  return typeof metadata.mac === "string" && typeof metadata.lastmodified === "string";
}

function dotenvHasMetadata(text: string): boolean {
  let mac = false;
  let modified = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("sops_mac=")) mac = true;
    if (line.startsWith("sops_lastmodified=")) modified = true;
  }
  return mac && modified;
}
