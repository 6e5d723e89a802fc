/**
 * Which commits GitHub has signed. Commits GitHub creates for an app through the API carry
 * GitHub's own signature and read back `verification: { verified: true, reason: "valid" }`
 * ("About commit signature verification": commits GitHub creates are signed with its key and
 * marked verified); `setApiCommitsSigned(repo, false)` turns that off for a repository, so a test
 * can show what `required_signatures` does to unsigned commits. The emulator keeps the SHA git
 * computed and records the signature beside it.
 */
import type { Repo } from "./model.js";

interface Signing {
  apiCommitsSigned: boolean;
  /** Commit SHA → when GitHub signed it. */
  signed: Map<string, string>;
}

const byRepo = new WeakMap<Repo, Signing>();

function signing(repo: Repo): Signing {
  let state = byRepo.get(repo);
  if (!state) {
    state = { apiCommitsSigned: true, signed: new Map() };
    byRepo.set(repo, state);
  }
  return state;
}

/** Whether commits apps create through the API are signed by GitHub (default true). */
export function setApiCommitsSigned(repo: Repo, on: boolean): void {
  signing(repo).apiCommitsSigned = on;
}

/**
 * Records a commit an app created through the Git Data API: GitHub signs it when the request
 * names no author or committer of its own and carries no signature.
 */
export function signApiCommit(repo: Repo, sha: string, body: Record<string, unknown>): void {
  const state = signing(repo);
  if (!state.apiCommitsSigned) return;
  if (body.author !== undefined || body.committer !== undefined || body.signature !== undefined) return;
  state.signed.set(sha, new Date().toISOString());
}

export function isVerified(repo: Repo, sha: string): boolean {
  return byRepo.get(repo)?.signed.has(sha) ?? false;
}

/** The `verification` object of a commit. */
export function verificationOf(repo: Repo, sha: string) {
  const signedAt = byRepo.get(repo)?.signed.get(sha);
  if (signedAt === undefined)
    return { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null };
  // The emulator's stand-in for GitHub's signature: its shape, not a real OpenPGP packet.
  const signature = `-----BEGIN PGP SIGNATURE-----\n\n${Buffer.from(sha).toString("base64")}\n-----END PGP SIGNATURE-----\n`;
  return { verified: true, reason: "valid", signature, payload: `commit ${sha}\n`, verified_at: signedAt };
}
