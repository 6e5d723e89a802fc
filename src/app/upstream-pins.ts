import type { FerryConfig } from "../core/config/schema.js";
import { FerryError } from "../core/errors.js";
import { currentImages } from "./plan-environment.js";
import type { CurrentImage, FileSource } from "./plan-inputs.js";
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
  const running = Object.entries(await currentImages(files, config, upstream)).filter(
    ([image, current]) => !options.include || options.include(image, current),
  );
  // Every image's digest is asked for at once; the registry client bounds them per registry.
  const answers = await Promise.all(
    running.map(async ([image, current]) => {
      const repository = config.images[image]!.repository;
      try {
        const digest =
          current.digest ??
          // A description (rather than a HEAD) also answers the promotion's own describe of that
          // digest, and the next environment's question about the same tag.
          (current.tag !== undefined ? (await registry.describe(repository, current.tag)).digest : undefined);
        return { image, current, digest };
      } catch (error) {
        if (options.onRegistryError !== "report" || !(error instanceof FerryError)) throw error;
        return { image, current, failure: `registry error: ${error.message}` };
      }
    }),
  );
  for (const { image, current, digest, failure } of answers) {
    if (failure !== undefined) result.failed.push({ image, reason: failure, error: true });
    else if (digest !== undefined)
      result.pins[image] = { ...(current.tag !== undefined ? { tag: current.tag } : {}), digest };
  }
  return result;
}
