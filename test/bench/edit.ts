import { performance } from "node:perf_hooks";
import { updateImage } from "../../src/core/yaml-edit/update-image.js";
import { sized } from "./size.js";

/**
 * Editing a generated 10,000-line Helm values file: how long one `updateImage` takes and how many
 * characters differ (only the tag's should). Only the top-level entries that can hold the image
 * are parsed; `under_one_key` is the same file nested under one key, where all of it must be.
 */
export async function bench(): Promise<Record<string, number>> {
  const text = generateValues(10_000);
  const update = { image: "ghcr.io/acme/shop", tag: "1.8.0", pin: "tag" as const };
  updateImage(text, update); // warm-up: JIT and module initialisation are not the edit
  const runs = sized(5, 1);
  const started = performance.now();
  let result = updateImage(text, update);
  for (let run = 1; run < runs; run++) result = updateImage(text, update);
  const ms = (performance.now() - started) / runs;
  // The same file with every component under one top-level key: no entry can be left out of
  // the parse, so this is the cost of a full parse and a full verification.
  const nested = `components:\n${text.replace(/^(?=.)/gm, "  ")}`;
  updateImage(nested, update);
  const nestedStarted = performance.now();
  for (let run = 0; run < runs; run++) updateImage(nested, update);
  const nestedMs = (performance.now() - nestedStarted) / runs;
  return {
    "edit.values_10k_lines.ms": Math.round(ms * 100) / 100,
    "edit.values_10k_lines.bytes_changed": bytesChanged(text, result.text),
    "edit.values_10k_lines_under_one_key.ms": Math.round(nestedMs * 100) / 100,
  };
}

/** A values file of about `lines` lines: many components, each with its own image block. */
export function generateValues(lines: number): string {
  const out: string[] = ["# generated values", "global:", '  imageRegistry: ""', ""];
  let component = 0;
  while (out.length < lines - 12) {
    out.push(
      `component${component}:`,
      `  enabled: ${component % 2 === 0}`,
      "  image:",
      `    repository: ghcr.io/acme/component-${component}`,
      `    tag: "1.${component % 50}.0" # pinned`,
      "    pullPolicy: IfNotPresent",
      "  resources:",
      "    limits: {cpu: 100m, memory: 128Mi}",
      `  replicas: ${component % 5}`,
      "",
    );
    component++;
  }
  out.push("shop:", "  image:", "    repository: ghcr.io/acme/shop", "    tag: 1.7.0", "");
  return `${out.join("\n")}\n`;
}

/** Characters outside the common prefix and suffix: the size of the splice. */
function bytesChanged(before: string, after: string): number {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (
    end < before.length - start &&
    end < after.length - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  )
    end++;
  return Math.max(before.length, after.length) - start - end;
}
