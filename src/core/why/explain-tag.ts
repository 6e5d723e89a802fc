/**
 * "Why wasn't my image updated?" for one tag (docs/config.md "Why a tag is not used"): the whole
 * chain of checks Ferry applies to a tag before it lands in an environment, each with its verdict,
 * in the order Ferry applies them. Pure: the caller gathers the facts (registry, state, CI, soak)
 * and this says what they mean, with the same functions the planner decides with.
 */
import { shortDigest } from "../image-ref.js";
import { isNewer, mayDowngrade, selectTag, type TagCandidate } from "../policy/select-tag.js";
import type { Policy } from "../policy/schema.js";
import { tagRefusal } from "../policy/tag-refusal.js";
import type { SignatureCheck } from "../policy/verify.js";

export type WhyVerdict = "ok" | "blocks" | "waits" | "n/a";

export interface WhyStep {
  /** policy, listed, newer, floor, metadata, signature, ci, update, hold, upstream, soak, window, group. */
  check: string;
  verdict: WhyVerdict;
  detail: string;
}

/** What the caller knows about the tag and the environment; undefined parts are reported as not known. */
export interface TagFacts {
  environment: string;
  image: string;
  tag: string;
  policy: Policy;
  now: Date;
  /** What the environment's files reference now. */
  current?: { tag?: string; digest?: string };
  /** Whether the registry lists the tag; undefined when it was not read. */
  listed?: boolean;
  /** The tag's manifest: digest, build date, platforms; or why it could not be read. */
  description?: { digest: string; created?: Date; platforms?: string[] } | { error: string };
  signature?: SignatureCheck;
  /** CI gating: true when the source commit passed, else why not; undefined without a `source`; `unknown` when not checked here. */
  ci?: true | string | { unknown: string };
  /** Undefined when the environment's state (floors, holds) could not be read. */
  state?: { floor?: string; hold?: { by: string; at: string; reason: string } };
  update: "auto" | "manual";
  /** For an environment with `from`: what the upstream runs of this image, and its soak. */
  upstream?: {
    environment: string;
    runs?: { tag?: string; digest?: string };
    /** Why it has not soaked yet; `soakUnknown` when that could not be asked here. */
    soakPending?: string;
    soakUnknown?: string;
  };
  /** Checks owned by other parts (change windows, PR groups), already decided. */
  more?: WhyStep[];
}

export interface TagExplanation {
  steps: WhyStep[];
  /** One line: the first check that blocks or waits, or that nothing does. */
  summary: string;
}

export function explainTag(facts: TagFacts): TagExplanation {
  const steps: WhyStep[] = [];
  const add = (check: string, verdict: WhyVerdict, detail: string) => steps.push({ check, verdict, detail });
  const { policy, tag, current } = facts;

  const refused = tagRefusal(policy, tag);
  add("policy", refused === undefined ? "ok" : "blocks", refused ?? `the policy admits ${tag}`);

  if (facts.listed === undefined) add("listed", "n/a", "the registry's tag list was not read");
  else
    add(
      "listed",
      facts.listed ? "ok" : "blocks",
      facts.listed ? "the registry lists it" : `the registry does not list ${tag}`,
    );

  if (current?.tag === undefined) add("newer", "ok", "the environment runs no tag yet");
  else if (current.tag === tag) add("newer", "blocks", `the environment already runs ${tag}`);
  else if (mayDowngrade(policy, current.tag))
    add("newer", "ok", `${current.tag} is outside the policy and allowDowngrade moves from it`);
  else {
    const newer = isNewer(tag, current.tag, policy);
    add(
      "newer",
      newer === false ? "blocks" : "ok",
      newer === false
        ? `not newer than ${current.tag}, which runs now (Ferry never moves back on its own)`
        : newer === true
          ? `newer than ${current.tag}, which runs now`
          : `the policy cannot order ${current.tag} (running now) against it`,
    );
  }

  const floor = facts.state?.floor;
  if (facts.state === undefined) add("floor", "n/a", "Ferry's state was not read");
  else if (floor === undefined) add("floor", "ok", "no floor");
  else {
    const above = isNewer(tag, floor, policy) !== false;
    add(
      "floor",
      above ? "ok" : "blocks",
      above
        ? `above the floor ${floor}`
        : `at or below the floor ${floor} (set by a revert or rollback; /unfloor lowers it)`,
    );
  }

  const description = facts.description;
  if (refused !== undefined) add("metadata", "n/a", "not checked: the policy does not admit the tag");
  else if (description === undefined) add("metadata", "n/a", "the manifest was not read");
  else if ("error" in description)
    add("metadata", "blocks", `its manifest could not be read: ${description.error}`);
  else {
    // The planner's own selection on this one tag: minAge, platforms, digest needs.
    const candidate: TagCandidate = { tag, digest: description.digest };
    if (description.created !== undefined) candidate.created = description.created;
    if (description.platforms !== undefined) candidate.platforms = description.platforms;
    if (facts.signature !== undefined) candidate.signature = facts.signature;
    const unsignedPolicy = policy.verify !== undefined ? { ...policy, verify: undefined } : policy;
    const alone = selectTag([candidate], { policy: unsignedPolicy as Policy, now: facts.now });
    add(
      "metadata",
      alone.kind === "selected" ? "ok" : "blocks",
      alone.kind === "selected" ? `${shortDigest(description.digest)}${metadataNote(policy)}` : alone.reason,
    );
  }

  if (policy.verify === undefined) add("signature", "n/a", "the policy asks for no signature");
  else if (facts.signature === undefined) add("signature", "n/a", "not checked");
  else
    add(
      "signature",
      facts.signature.verified ? "ok" : "blocks",
      facts.signature.verified ? `signed (${facts.signature.via})` : facts.signature.reason,
    );

  if (facts.ci === undefined) add("ci", "n/a", "no CI gating (the image names no source)");
  else if (typeof facts.ci === "object") add("ci", "n/a", facts.ci.unknown);
  else
    add(
      "ci",
      facts.ci === true ? "ok" : "waits",
      facts.ci === true ? "its source commit passed CI" : facts.ci,
    );

  add(
    "update",
    facts.update === "auto" ? "ok" : "waits",
    facts.update === "auto" ? "automatic updates" : "update: manual: only /promote moves it",
  );

  const hold = facts.state?.hold;
  if (facts.state !== undefined)
    add(
      "hold",
      hold ? "waits" : "ok",
      hold
        ? `on hold since ${hold.at} by @${hold.by} (${hold.reason}); /unhold ${facts.environment}`
        : "not on hold",
    );

  if (facts.upstream !== undefined) {
    const { environment, runs, soakPending, soakUnknown } = facts.upstream;
    const same =
      runs !== undefined &&
      (runs.tag === tag ||
        (description !== undefined && !("error" in description) && runs.digest === description.digest));
    add(
      "upstream",
      same ? "ok" : "waits",
      same
        ? `${environment} runs it`
        : `${environment} runs ${runs?.tag ?? runs?.digest ?? "no version of it"}: this environment gets only what ${environment} runs`,
    );
    if (soakUnknown !== undefined) add("soak", "n/a", soakUnknown);
    else
      add(
        "soak",
        soakPending ? "waits" : "ok",
        soakPending ?? `${environment} has soaked (or no soak is set)`,
      );
  }

  steps.push(...(facts.more ?? []));
  const first = steps.find((step) => step.verdict === "blocks" || step.verdict === "waits");
  const summary = first
    ? `${facts.image}@${tag} in ${facts.environment}: ${first.verdict === "blocks" ? "not used" : "waits"}: ${first.check}: ${first.detail}`
    : `${facts.image}@${tag} in ${facts.environment}: nothing holds it back; the next scan proposes it (unless a newer admitted tag wins)`;
  return { steps, summary };
}

function metadataNote(policy: Policy): string {
  const parts: string[] = [];
  if (policy.minAge !== undefined) parts.push(`older than minAge ${policy.minAge}`);
  if (policy.platforms.length > 0) parts.push(`has ${policy.platforms.join(", ")}`);
  return parts.length > 0 ? `: ${parts.join(", ")}` : "";
}

/** The explanation as text: the summary, then one line per check. `markdown` gives a table. */
export function formatExplanation(explanation: TagExplanation, markdown = false): string {
  const mark = { ok: "✅", blocks: "❌", waits: "⏳", "n/a": "➖" } as const;
  if (markdown) {
    const escape = (text: string) => text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
    return [
      explanation.summary,
      "",
      "| check | | detail |",
      "|---|---|---|",
      ...explanation.steps.map(
        (step) => `| ${step.check} | ${mark[step.verdict]} | ${escape(step.detail)} |`,
      ),
    ].join("\n");
  }
  const width = Math.max(...explanation.steps.map((step) => step.check.length));
  return [
    explanation.summary,
    ...explanation.steps.map(
      (step) => `  ${step.check.padEnd(width)}  ${step.verdict.padEnd(6)}  ${step.detail}`,
    ),
  ].join("\n");
}
