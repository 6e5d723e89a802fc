import type { FerryConfig } from "../core/config/schema.js";
import { FerryError } from "../core/errors.js";
import { currentImages, type CurrentImage, type FileSource } from "./plan-environment.js";
import type { RegistryReader } from "./ports.js";

/** Exact versions to write, per image: the tag when there is one, and always the digest. */
export type Pins = Record<string, { tag?: string; digest: string }>;

export interface UpstreamPins {
  pins: Pins;
  /** Images whose digest the registry could not give (only with `onRegistryError: "report"`). */
  failed: { image: string; reason: string; error: true }[];
}

/**
 * "Take what the upstream environment runs": per image, the tag and digest its files reference
 * (the digest resolved from the tag when the files carry none), as pins for a promotion. Shared by
 * `/promote`, automatic environments with `from`, and `ferry plan`. `include` picks the images (it
 * may refuse one by throwing); a registry error fails the whole answer unless it is to be reported.
 */
export async function upstreamPins(
  registry: RegistryReader,
  files: FileSource,
  config: FerryConfig,
  upstream: string,
  options: {
    include?: (image: string, running: CurrentImage) => boolean;
    onRegistryError?: "throw" | "report";
  } = {},
): Promise<UpstreamPins> {
  const result: UpstreamPins = { pins: {}, failed: [] };
  for (const [image, running] of Object.entries(await currentImages(files, config, upstream))) {
    if (options.include && !options.include(image, running)) continue;
    const repository = config.images[image]!.repository;
    let digest: string | undefined;
    try {
      digest =
        running.digest ??
        (running.tag !== undefined ? await registry.resolveDigest(repository, running.tag) : undefined);
    } catch (error) {
      if (options.onRegistryError !== "report" || !(error instanceof FerryError)) throw error;
      result.failed.push({ image, reason: `registry error: ${error.message}`, error: true });
      continue;
    }
    if (digest === undefined) continue;
    result.pins[image] = { ...(running.tag !== undefined ? { tag: running.tag } : {}), digest };
  }
  return result;
}
