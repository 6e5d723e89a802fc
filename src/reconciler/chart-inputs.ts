/**
 * Checks what `helm template` would read before it runs, as kustomize-inputs.ts does for
 * kustomize: every file under the chart folder (its `charts/` dependencies included) and every
 * values file is inside the config repo (helm follows symlinks), within the per-file, total and
 * file-count limits; the chart's YAML files (Chart.yaml, values files, not Go templates) within
 * the document and alias limits. helm itself never downloads anything (no
 * `--dependency-update`): dependencies come from the `charts/` folder as committed, or, for
 * `oci://` ones, are downloaded by Ferry before the render (chart-dependencies.ts).
 */
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../core/errors.js";
import { checkYamlText, DEFAULT_INPUT_LIMITS, type InputLimits } from "./kustomize-inputs.js";

/** A chart's own YAML (not templates, which are Go templates): checked for alias bombs. */
function isChartYaml(relative: string): boolean {
  const parts = relative.split(path.sep);
  if (parts.includes("templates")) return false;
  const name = parts.at(-1)!;
  return name === "Chart.yaml" || name === "requirements.yaml" || /^values.*\.ya?ml$/.test(name);
}

export async function checkChartInputs(
  root: string,
  chart: string,
  valuesFiles: readonly string[],
  options: { limits?: Partial<InputLimits> } = {},
): Promise<void> {
  const limits = { ...DEFAULT_INPUT_LIMITS, ...options.limits };
  const realRoot = await realpath(root);
  const display = (file: string) => path.relative(realRoot, file) || ".";
  let files = 0;
  let totalBytes = 0;

  const inside = async (file: string, where: string): Promise<string> => {
    const real = await realpath(file);
    if (real !== realRoot && !real.startsWith(realRoot + path.sep))
      throw new UserError("path-outside-repo", `${where} leaves the config repo; refused before rendering`);
    return real;
  };
  const checkFile = async (file: string, yaml: boolean): Promise<void> => {
    if (++files > limits.maxFiles)
      throw new UserError(
        "render-input-too-many-files",
        `more than ${limits.maxFiles} files in chart ${display(chart)}`,
      );
    const size = (await stat(file)).size;
    if (size > limits.maxFileBytes)
      throw new UserError(
        "render-input-too-large",
        `${display(file)}: ${size} bytes (limit ${limits.maxFileBytes} per file); refused before rendering`,
      );
    totalBytes += size;
    if (totalBytes > limits.maxTotalBytes)
      throw new UserError(
        "render-input-too-large",
        `the files helm would read exceed ${limits.maxTotalBytes} bytes in total (at ${display(file)})`,
      );
    if (yaml) checkYamlText(await readFile(file, "utf8"), display(file), limits);
  };

  const visited = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    const realDir = await realpath(dir);
    if (visited.has(realDir)) return; // a link back up the tree
    visited.add(realDir);
    for (const name of (await readdir(dir)).sort()) {
      if (name === ".git") continue;
      const full = path.join(dir, name);
      let info = await lstat(full);
      let real = full;
      if (info.isSymbolicLink()) {
        real = await inside(full, display(full));
        info = await stat(real);
      }
      if (info.isDirectory()) await walk(real);
      else if (info.isFile()) await checkFile(real, isChartYaml(path.relative(chart, full)));
    }
  };
  await walk(chart);
  for (const file of valuesFiles) await checkFile(await inside(file, display(file)), true);
}
