/**
 * The words of CI gating (docs/config.md "Images"): when an image names a `source` repository, a
 * tag is eligible only once the commit it was built from passed CI there. The commit is the
 * image's `org.opencontainers.image.revision` label, else the source repository's git tag of the
 * same name. Pure: the caller looks both up; this module only says what the answer means, so the
 * app, `ferry plan`, `/status` and the dashboard say the same sentence.
 */
import { shortSha } from "../commit-sha.js";

/** The outcome of one gate: eligible, or the one-line reason why not. */
export type GateOutcome = { eligible: true } | { eligible: false; why: string };

/** The CI state of the revision, as the checks API summarises it. */
export type RevisionCi = "success" | "pending" | "failure" | "none";

export const REVISION_LABEL = "org.opencontainers.image.revision";

/** Decides one tag from what was found: the revision (label or git tag) and its CI state. */
export function gateOutcome(input: {
  tag: string;
  source: string;
  /** Where the revision came from; undefined when neither the label nor a git tag named one. */
  revision?: { sha: string; from: "label" | "git-tag" };
  ci?: RevisionCi;
}): GateOutcome {
  const { tag, source, revision, ci } = input;
  if (revision === undefined)
    return { eligible: false, why: `no revision label and no tag ${tag} in ${source}` };
  if (ci === "success") return { eligible: true };
  const commit = `${revision.from === "label" ? "revision" : `tag ${tag} →`} ${shortSha(revision.sha)} in ${source}`;
  const state =
    ci === "failure" ? "failed CI" : ci === "pending" ? "has CI still running" : "has no CI result yet";
  return { eligible: false, why: `${commit} ${state}` };
}

/** The sentence shown for a tag held back by the gate: "1.9.0 waits for CI gating: …". */
export function gateWaitMessage(tag: string, why: string): string {
  return `${tag} waits for CI gating: ${why}`;
}

/**
 * What `ferry plan` (which has no GitHub access) can say about a proposed tag of a gated image:
 * the app proposes it only once the commit passed CI, and which commit that is.
 */
export function gateNoticeForPlan(input: { tag: string; source: string; revision?: string }): string {
  const { tag, source, revision } = input;
  const commit =
    revision !== undefined
      ? `its revision ${shortSha(revision)}`
      : `the commit of tag ${tag} in ${source} (the image has no ${REVISION_LABEL} label)`;
  return `CI gating: the app proposes ${tag} only once ${commit} passed CI in ${source}; an image with neither the label nor a matching git tag is never proposed`;
}
