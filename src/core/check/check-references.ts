import { isMap, isSeq, LineCounter } from "yaml";
import { parseDocumentUnique } from "../yaml/unique-keys.js";
import { CONFIG_PATH } from "../config/load-config.js";
import type { FerryConfig } from "../config/schema.js";
import { isUserError } from "../errors.js";
import { currentImage, findReferences, type FindOptions } from "../targets/index.js";
import { YamlSyntaxError } from "../yaml/yaml-tree.js";

export interface ReferenceProblem {
  file: string;
  line: number;
  column: number;
  message: string;
  /** `failure`: the check fails (a plaintext Secret); otherwise a warning Ferry works around. */
  level?: "failure";
}

/**
 * For each environment and image: is the image referenced in the environment's files? files:
 * path → text, already restricted to the env paths. Also reports files that are not valid YAML
 * and files or environments whose references disagree about what runs (Ferry could not tell
 * which one is current).
 *
 * `configText` (the text of .github/ferry.yml), when given, lets a missing reference point at
 * the environment's `paths` line instead of the top of the file. `generated` names the entries
 * imageRules and environmentSets made: a generated image lives where it was found and a generated
 * environment holds its own app, so neither is missed elsewhere (docs/config.md "Generated images
 * and environments").
 */
export function checkReferences(
  config: FerryConfig,
  filesByEnvironment: Map<string, Map<string, string>>,
  configText?: string,
  generated: readonly { kind: "image" | "environment"; name: string }[] = [],
): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const made = new Set(generated.map((entry) => `${entry.kind}:${entry.name}`));
  const unreadable = new Set<string>();
  for (const [environment, environmentConfig] of Object.entries(config.environments)) {
    const files = filesByEnvironment.get(environment) ?? new Map<string, string>();
    for (const [imageName, image] of Object.entries(config.images)) {
      let referenced = false;
      let running: { file: string; line: number; tag?: string; digest?: string } | undefined;
      for (const [file, text] of files) {
        const options: FindOptions = { markerName: imageName, fileName: file };
        if (image.helm) options.helm = image.helm;
        try {
          if (findReferences(text, image.repository, options).length === 0) continue;
          referenced = true;
          const current = currentImage(text, image.repository, options);
          if (!current) continue;
          if (
            running &&
            ((current.tag !== undefined && running.tag !== undefined && current.tag !== running.tag) ||
              (current.digest !== undefined &&
                running.digest !== undefined &&
                current.digest !== running.digest))
          ) {
            problems.push({
              file,
              line: current.line,
              column: 1,
              message: `${imageName} runs ${describe(current)} here but ${describe(running)} in ${running.file}:${running.line} (environment ${environment})`,
            });
          } else if (!running) {
            running = { file, ...current };
          }
        } catch (error) {
          if (!isUserError(error)) throw error;
          if (error instanceof YamlSyntaxError) {
            if (!unreadable.has(file))
              problems.push({ file, line: error.line, column: error.column, message: error.message });
            unreadable.add(file);
          } else {
            problems.push({ file, line: 1, column: 1, message: `${imageName}: ${error.message}` });
          }
        }
      }
      // A file that could not be read is already reported, and may hold the reference.
      const expected = !made.has(`image:${imageName}`) && !made.has(`environment:${environment}`);
      if (expected && !referenced && ![...files.keys()].some((file) => unreadable.has(file))) {
        const where = environmentPathsPosition(configText, environment);
        problems.push({
          file: CONFIG_PATH,
          ...where,
          message: `image ${imageName} (${image.repository}) is not referenced in environment ${environment}'s paths (${environmentConfig.paths.join(", ")})`,
        });
      }
    }
  }
  return problems.sort(byPosition);
}

/** Orders problems by file, line and column, the order a person reads them in. */
export function byPosition(a: ReferenceProblem, b: ReferenceProblem): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column;
}

function describe(image: { tag?: string; digest?: string }): string {
  return [image.tag, image.digest].filter((part) => part !== undefined).join("@") || "no tag";
}

/** The line and column of `environments.<name>.paths` in the config text, else 1:1. */
export function environmentPathsPosition(
  configText: string | undefined,
  environment: string,
): { line: number; column: number } {
  if (configText === undefined) return { line: 1, column: 1 };
  const lineCounter = new LineCounter();
  const document = parseDocumentUnique(configText, { lineCounter });
  const environments = document.get("environments", true);
  if (!isMap(environments)) return { line: 1, column: 1 };
  const pair = environments.items.find(
    (item) => String((item.key as { value?: unknown })?.value) === environment,
  );
  const node = isMap(pair?.value) ? pair.value.get("paths", true) : undefined;
  const offset = isSeq(node)
    ? node.range?.[0]
    : (pair?.key as { range?: [number, number, number] } | undefined)?.range?.[0];
  if (offset === undefined) return { line: 1, column: 1 };
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** The line and column of the key `registries.<key>` in the config text, else 1:1. */
export function registryKeyPosition(configText: string, key: string): { line: number; column: number } {
  const lineCounter = new LineCounter();
  const document = parseDocumentUnique(configText, { lineCounter });
  const registries = document.get("registries", true);
  if (!isMap(registries)) return { line: 1, column: 1 };
  const pair = registries.items.find((item) => String((item.key as { value?: unknown })?.value) === key);
  const offset = (pair?.key as { range?: [number, number, number] } | undefined)?.range?.[0];
  if (offset === undefined) return { line: 1, column: 1 };
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}
