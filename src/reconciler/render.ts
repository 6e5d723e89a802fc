/**
 * The render step: a checked-out folder → validated objects. A folder with a kustomization file
 * goes through `kubectl kustomize` (child process, with a timeout and an output cap); any other
 * folder is read as plain manifests, recursively, in sorted order.
 */
import { spawn } from "node:child_process";
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../core/errors.js";
import {
  DEFAULT_RENDER_LIMITS,
  parseManifests,
  RenderBudget,
  type RenderedObject,
  type RenderLimits,
} from "./parse-manifests.js";

export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const MANIFEST_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

export interface RenderOptions {
  limits?: Partial<RenderLimits>;
  /** The kubectl binary for `kubectl kustomize`. */
  kubectl?: string;
  kustomizeTimeoutMs?: number;
}

/**
 * Resolves `relative` inside `root` and refuses anything that escapes it, including by symlink
 * (Argo CD keeps out-of-bounds symlinks off for the same reason).
 */
export async function resolveInside(root: string, relative: string): Promise<string> {
  const realRoot = await realpath(root);
  const candidate = path.resolve(realRoot, relative);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new UserError(
      "path-not-found",
      `path ${JSON.stringify(relative)} does not exist in the config repo`,
    );
  }
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new UserError("path-outside-repo", `path ${JSON.stringify(relative)} leaves the config repo`);
  }
  return real;
}

export async function renderPath(
  root: string,
  relative: string,
  options: RenderOptions = {},
): Promise<RenderedObject[]> {
  const limits = { ...DEFAULT_RENDER_LIMITS, ...options.limits };
  const folder = await resolveInside(root, relative);
  const budget = new RenderBudget(limits);
  if (!(await stat(folder)).isDirectory()) {
    return parseManifests(await readCapped(folder, limits.maxBytes), relative, budget);
  }
  const entries = await readdir(folder);
  if (KUSTOMIZATION_FILES.some((name) => entries.includes(name))) {
    const output = await runKustomize(
      folder,
      options.kubectl ?? "kubectl",
      options.kustomizeTimeoutMs ?? 60_000,
      limits.maxBytes,
    );
    return parseManifests(output, `kustomize build ${relative}`, budget);
  }
  const objects: RenderedObject[] = [];
  const realRoot = await realpath(root);
  for (const file of await listManifestFiles(folder)) {
    const display = path.relative(realRoot, file);
    objects.push(...parseManifests(await readCapped(file, limits.maxBytes - budget.bytes), display, budget));
  }
  return objects;
}

async function readCapped(file: string, remainingBytes: number): Promise<string> {
  const size = (await stat(file)).size;
  // Check before reading, so a huge file is refused without loading it.
  if (size > remainingBytes)
    throw new UserError("render-too-large", `${path.basename(file)}: manifests exceed the size limit`);
  return readFile(file, "utf8");
}

/** Every manifest file under `folder`, sorted by path; hidden entries and symlinks are skipped. */
async function listManifestFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const full = path.join(dir, name);
      const info = await lstat(full);
      if (info.isSymbolicLink()) continue;
      if (info.isDirectory()) await walk(full);
      else if (info.isFile() && MANIFEST_EXTENSIONS.has(path.extname(name).toLowerCase())) found.push(full);
    }
  };
  await walk(folder);
  return found.sort();
}

/** `kubectl kustomize DIR`, killed when it runs past the timeout or prints more than the cap. */
export function runKustomize(
  folder: string,
  kubectl: string,
  timeoutMs: number,
  maxBytes: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectl, ["kustomize", folder], { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let stderr = "";
    let failure: UserError | undefined;
    const stop = (error: UserError) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () => stop(new UserError("render-timeout", `kustomize build timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes)
        stop(new UserError("render-too-large", `kustomize output exceeds ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(
        new UserError("render-failed", `cannot run ${kubectl} kustomize: ${error.message}`, { cause: error }),
      );
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0)
        reject(
          new UserError(
            "render-failed",
            `kustomize build failed: ${stderr.trim().split("\n").slice(-3).join(" ")}`,
          ),
        );
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}
