/** What a source file loads at start: its static imports, followed through the tree (a text scan, no build). */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** Static value imports and re-exports of a file (type-only ones are erased; dynamic ones load later). */
export function staticImports(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(import|export)\s+(?!type\s)[^;]*?from\s+["']([^"']+)["']|(?:^|\n)\s*import\s+["']([^"']+)["']/g,
    ),
  ].map((match) => (match[2] ?? match[3])!);
}

/** Every package a module loads at start, through its static imports. */
export function packagesLoadedBy(root: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier).replace(/\.js$/, ".ts"));
      else if (!specifier.startsWith("node:"))
        packages.add(
          specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!,
        );
    }
  };
  visit(root);
  return packages;
}
