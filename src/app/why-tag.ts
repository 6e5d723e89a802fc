/**
 * Gathers the facts `explainTag` (core/why/explain-tag.ts) reads for one image and tag of one
 * environment: the files, the registry's list and manifest, the signature, and what the caller can
 * add (Ferry's state, CI gating, the upstream's soak). Shared by `/ferry why` and `ferry plan --why`
 * (docs/config.md "Why a tag is not used").
 */
import { type FerryConfig } from "../core/config/schema.js";
import { environmentPolicy } from "../core/policy/layered-policy.js";
import { UserError } from "../core/errors.js";
import { rankTags, selectTag } from "../core/policy/select-tag.js";
import type { FerryState } from "../core/state/ferry-state.js";
import { explainTag, type TagExplanation, type TagFacts, type WhyStep } from "../core/why/explain-tag.js";
import { checkSignature } from "./choose-target.js";
import { errorText } from "./error-text.js";
import { currentImages } from "./plan-environment.js";
import type { FileSource } from "./plan-inputs.js";
import type { ImageDescription, RegistryReader } from "./ports.js";
import type { SecretRedactor } from "../core/redact.js";

export interface WhyQuestion {
  environment: string;
  image: string;
  /** The tag asked about; without it, the newest tag the policy admits by name. */
  tag?: string;
}

export interface WhySources {
  registry: RegistryReader;
  files: FileSource;
  config: FerryConfig;
  now: Date;
  secrets?: SecretRedactor | undefined;
  /** Ferry's state (floors, holds); undefined where it cannot be read (the CLI). */
  state?: FerryState;
  /** CI gating for a tag of an image with a `source`; undefined where GitHub cannot be asked. */
  ci?: (image: string, tag: string, description: ImageDescription) => Promise<true | string>;
  /** Why the upstream has not soaked yet (undefined: it has, or there is no soak). */
  soakPending?: (upstream: string) => Promise<string | undefined>;
  /** Checks decided elsewhere (change windows, PR groups). */
  more?: (question: Required<WhyQuestion>) => Promise<WhyStep[]>;
}

export async function explainImageTag(sources: WhySources, question: WhyQuestion): Promise<TagExplanation> {
  const { config, registry, files, environment: env } = { ...sources, environment: question.environment };
  const settings = config.environments[env];
  if (settings === undefined) throw new UserError("unknown-environment", `unknown environment ${env}`);
  const image = config.images[question.image];
  if (image === undefined) throw new UserError("unknown-image", `unknown image ${question.image}`);
  const policy = environmentPolicy(config, env, question.image);
  const running = (await currentImages(files, config, env))[question.image];

  let tags: string[] | undefined;
  let listError: string | undefined;
  try {
    tags = await registry.listTags(image.repository);
  } catch (error) {
    listError = errorText(error, sources.secrets);
  }
  const tag = question.tag ?? (tags ? rankTags(tags, policy)[0] : undefined);
  if (tag === undefined) {
    const reason = tags
      ? selectTag(
          tags.map((listed) => ({ tag: listed })),
          { policy, now: sources.now },
        ).reason
      : `the registry's tags could not be read: ${listError}`;
    return {
      steps: [{ check: "policy", verdict: "blocks", detail: reason }],
      summary: `${question.image} in ${env}: no tag to use: ${reason}`,
    };
  }

  const facts: TagFacts = {
    environment: env,
    image: question.image,
    tag,
    policy,
    now: sources.now,
    update: settings.update,
  };
  if (running)
    facts.current = {
      ...(running.tag ? { tag: running.tag } : {}),
      ...(running.digest ? { digest: running.digest } : {}),
    };
  if (tags) facts.listed = tags.includes(tag);
  let description: ImageDescription | undefined;
  try {
    description = await registry.describe(image.repository, tag);
    facts.description = {
      digest: description.digest,
      ...(description.created ? { created: description.created } : {}),
      platforms: description.platforms,
    };
  } catch (error) {
    facts.description = { error: errorText(error, sources.secrets) };
  }
  if (description && policy.verify !== undefined)
    facts.signature = await checkSignature(registry, image.repository, description.digest, policy.verify);
  if (image.source !== undefined)
    facts.ci =
      sources.ci && description
        ? await sources.ci(question.image, tag, description)
        : { unknown: "not checked here (GitHub is not asked)" };
  if (sources.state) {
    const floor = sources.state.floors[env]?.[question.image];
    const hold = sources.state.holds[env];
    facts.state = { ...(floor !== undefined ? { floor } : {}), ...(hold ? { hold } : {}) };
  }
  if (settings.from !== undefined) {
    const upstream = (await currentImages(files, config, settings.from))[question.image];
    const soak = sources.soakPending ? await sources.soakPending(settings.from) : undefined;
    facts.upstream = {
      environment: settings.from,
      ...(sources.soakPending === undefined && settings.soak !== undefined
        ? { soakUnknown: "not checked here (the upstream's health is read from GitHub)" }
        : {}),
      ...(upstream
        ? {
            runs: {
              ...(upstream.tag ? { tag: upstream.tag } : {}),
              ...(upstream.digest ? { digest: upstream.digest } : {}),
            },
          }
        : {}),
      ...(soak ? { soakPending: soak } : {}),
    };
  }
  if (sources.more) facts.more = await sources.more({ environment: env, image: question.image, tag });
  return explainTag(facts);
}
