import { createHash } from "node:crypto";
import type { Permission } from "../../src/core/config/schema.js";
import { UserError } from "../../src/core/errors.js";
import type { AppDeps } from "../../src/app/app-deps.js";
import type {
  BranchInfo,
  CheckRunInput,
  CommitInput,
  ChecksState,
  DeploymentHealth,
  GitHubRepoPort,
  IssueInfo,
  PullRequestInfo,
  ReactionContent,
  TreeEntry,
} from "../../src/app/github-port.js";
import { STATE_FILE, STATE_REF } from "../../src/app/github-port.js";
import { KeyedMutex } from "../../src/app/keyed-mutex.js";
import type { ImageDescription, RegistryReader } from "../../src/app/ports.js";

interface Commit {
  files: Record<string, string>;
  parents: string[];
}

const sha = (text: string): string => createHash("sha1").update(text).digest("hex");

/**
 * An in-memory GitHub for one repository, at the port: commits are file maps, refs move only by
 * fast-forward (like GitHub without force), and every call is recorded so tests can count requests.
 */
export class FakeGitHub implements GitHubRepoPort {
  readonly owner = "acme";
  readonly repo = "config";
  readonly calls: string[] = [];
  readonly commits = new Map<string, Commit>();
  readonly branches = new Map<string, string>();
  readonly protectedBranches = new Map<string, string[]>();
  readonly pulls: (PullRequestInfo & { labelsAdded: string[]; reviewers: string[] })[] = [];
  readonly issues: (IssueInfo & { comments: string[] })[] = [];
  readonly comments: { issue: number; body: string }[] = [];
  readonly reactions = new Map<number, Set<ReactionContent>>();
  readonly permissions = new Map<string, Permission>();
  readonly teams = new Map<string, string[]>();
  readonly checkRuns: CheckRunInput[] = [];
  readonly checks = new Map<string, ChecksState>();
  readonly health = new Map<string, DeploymentHealth>();
  autoMergeAllowed = false;
  readonly autoMerged = new Set<number>();
  /** Called before each updateRef: lets a test move the branch under Ferry's feet. */
  beforeUpdateRef?: (branch: string) => void;
  /** Awaited before each state ref compare-and-swap: lets a test run a rival writer in between. */
  beforeStateWrite?: () => Promise<void> | void;

  constructor(files: Record<string, string>) {
    const root = this.#store({ files, parents: [] });
    this.branches.set("main", root);
  }

  #store(commit: Commit): string {
    const id = sha(JSON.stringify(commit) + this.commits.size);
    this.commits.set(id, commit);
    return id;
  }

  /** Pushes a commit to a branch (a person or another tool). */
  push(branch: string, change: Record<string, string>): string {
    const parent = this.branches.get(branch)!;
    const id = this.#store({ files: { ...this.commits.get(parent)!.files, ...change }, parents: [parent] });
    this.branches.set(branch, id);
    return id;
  }

  file(branch: string, path: string): string | undefined {
    return this.commits.get(this.branches.get(branch)!)?.files[path];
  }

  /** Merges a PR the way GitHub would (tree of the head, which contains the base). */
  mergeNow(number: number): void {
    const pull = this.pulls.find((p) => p.number === number)!;
    const head = this.commits.get(this.branches.get(pull.headRef)!)!;
    const id = this.#store({ files: head.files, parents: [this.branches.get(pull.baseRef)!, pull.headSha] });
    this.branches.set(pull.baseRef, id);
    pull.state = "closed";
    pull.merged = true;
  }

  async defaultBranch() {
    this.calls.push("defaultBranch");
    return "main";
  }
  async getBranch(name: string): Promise<BranchInfo | undefined> {
    this.calls.push("getBranch");
    const id = this.branches.get(name);
    if (!id) return undefined;
    const { parents } = this.commits.get(id)!;
    return {
      sha: id,
      treeSha: `tree-${id}`,
      parents: [...parents],
      protected: this.protectedBranches.has(name),
    };
  }
  async readFile(ref: string, path: string) {
    this.calls.push("readFile");
    const id = this.branches.get(ref) ?? ref;
    return this.commits.get(id)?.files[path];
  }
  async listTree(treeSha: string): Promise<TreeEntry[]> {
    this.calls.push("listTree");
    const commit = this.commits.get(treeSha.replace(/^tree-/, ""))!;
    // GitHub's tree lists each blob's size, which the file source checks before reading.
    return Object.entries(commit.files).map(([path, text]) => ({
      path,
      type: path.endsWith(".link") ? "symlink" : "blob",
      sha: `blob:${treeSha}:${path}`,
      size: Buffer.byteLength(text),
    }));
  }
  async readBlob(blob: string) {
    this.calls.push("readBlob");
    const [, tree, ...path] = blob.split(":");
    return this.commits.get(tree!.replace(/^tree-/, ""))!.files[path.join(":")]!;
  }
  async createCommit(input: CommitInput) {
    this.calls.push("createCommit");
    const files =
      "treeSha" in input
        ? this.commits.get(input.treeSha.replace(/^tree-/, ""))!.files
        : { ...this.commits.get(input.baseTreeSha.replace(/^tree-/, ""))!.files, ...input.files };
    const id = this.#store({ files, parents: input.parents });
    return { sha: id, treeSha: `tree-${id}` };
  }
  async createRef(branch: string, id: string) {
    this.calls.push("createRef");
    if (this.branches.has(branch)) return "exists" as const;
    this.branches.set(branch, id);
    return "created" as const;
  }
  async updateRef(branch: string, id: string) {
    this.calls.push("updateRef");
    this.beforeUpdateRef?.(branch);
    const current = this.branches.get(branch);
    if (current === id) return "updated" as const;
    if (!current || !this.commits.get(id)!.parents.includes(current)) return "conflict" as const;
    this.branches.set(branch, id);
    for (const pull of this.pulls) if (pull.headRef === branch && pull.state === "open") pull.headSha = id;
    return "updated" as const;
  }
  /** The state as Ferry last wrote it on the state ref (undefined before the first write). */
  stateFile(): string | undefined {
    const head = this.branches.get(STATE_REF);
    return head === undefined ? undefined : this.commits.get(head)?.files[STATE_FILE];
  }
  async stateHead() {
    this.calls.push("stateHead");
    return this.branches.get(STATE_REF);
  }
  async writeStateCommit(parent: string | undefined, content: string, _message: string) {
    this.calls.push("writeStateCommit");
    const id = this.#store({
      files: { [STATE_FILE]: content },
      parents: parent === undefined ? [] : [parent],
    });
    await this.beforeStateWrite?.();
    // Like POST /git/refs (422 when it exists) and PATCH without force (422 unless a fast-forward).
    if (this.branches.get(STATE_REF) !== parent) return "conflict" as const;
    this.branches.set(STATE_REF, id);
    return "written" as const;
  }
  async findOpenPull(head: string) {
    this.calls.push("findOpenPull");
    const pull = this.pulls.find((p) => p.headRef === head && p.state === "open");
    return pull ? { ...pull } : undefined;
  }
  /** As GitHub's `GET /pulls?state=open`: every open PR, forks' too, at most `limit`. */
  async listOpenPulls(limit: number) {
    this.calls.push("listOpenPulls");
    return this.pulls
      .filter((p) => p.state === "open")
      .slice(0, limit)
      .map((p) => ({ ...p }));
  }
  async getPull(number: number) {
    this.calls.push("getPull");
    const pull = this.pulls.find((p) => p.number === number);
    return pull ? { ...pull } : undefined;
  }
  #nextNumber(): number {
    return this.pulls.length + this.issues.length + 1;
  }
  async createPull(input: { head: string; base: string; title: string; body: string }) {
    this.calls.push("createPull");
    const pull = {
      number: this.#nextNumber(),
      nodeId: `PR_${this.pulls.length}`,
      state: "open" as const,
      merged: false,
      headRef: input.head,
      headSha: this.branches.get(input.head)!,
      baseRef: input.base,
      title: input.title,
      body: input.body,
      labels: [],
      autoMerge: false,
      // As GitHub: the PR's author is whoever opened it, Ferry's port opens it as the app.
      author: "ferry[bot]",
      headRepo: "acme/config",
      labelsAdded: [] as string[],
      reviewers: [] as string[],
    };
    this.pulls.push(pull);
    return { ...pull };
  }
  async updatePull(number: number, input: { title?: string; body?: string; state?: "open" | "closed" }) {
    this.calls.push("updatePull");
    const pull = this.pulls.find((p) => p.number === number)!;
    Object.assign(pull, input);
  }
  async addLabels(number: number, labels: string[]) {
    this.calls.push("addLabels");
    const pull = this.pulls.find((p) => p.number === number)!;
    pull.labels.push(...labels);
  }
  async requestReviewers(number: number, users: string[], teams: string[]) {
    this.calls.push("requestReviewers");
    this.pulls.find((p) => p.number === number)!.reviewers.push(...users, ...teams);
  }
  async enableAutoMerge(pull: PullRequestInfo, expectedHead: string) {
    this.calls.push("enableAutoMerge");
    if (!this.autoMergeAllowed) return "unavailable" as const;
    if (this.pulls.find((p) => p.number === pull.number)!.headSha !== expectedHead)
      return "unavailable" as const;
    this.autoMerged.add(pull.number);
    this.pulls.find((p) => p.number === pull.number)!.autoMerge = true;
    return "enabled" as const;
  }
  async allowedMergeMethods() {
    return undefined;
  }
  /** The repository's settings are not visible to the token (GitHub leaves them out). */
  settingsHidden = false;
  async allowsAutoMerge() {
    return this.settingsHidden ? undefined : this.autoMergeAllowed;
  }
  async disableAutoMerge(pull: PullRequestInfo) {
    this.calls.push("disableAutoMerge");
    this.autoMerged.delete(pull.number);
    this.pulls.find((p) => p.number === pull.number)!.autoMerge = false;
  }
  /** A merge queue on the base: a direct merge is refused, and `enqueuePull` gets this answer. */
  mergeQueue: ((pull: PullRequestInfo) => "queued" | { refused: string }) | undefined;
  async enqueuePull(pull: PullRequestInfo) {
    this.calls.push("enqueuePull");
    return this.mergeQueue?.(pull) ?? { refused: "the base branch has no merge queue" };
  }
  async merge(number: number, head: string): ReturnType<GitHubRepoPort["merge"]> {
    this.calls.push("merge");
    if (this.mergeQueue) return "queue-required";
    const pull = this.pulls.find((p) => p.number === number)!;
    if (pull.headSha !== head) return "head-moved" as const;
    this.mergeNow(number);
    return "merged" as const;
  }
  async requiredChecks(branch: string) {
    this.calls.push("requiredChecks");
    return this.protectedBranches.get(branch);
  }
  async checksState(id: string, contexts?: string[]) {
    this.calls.push("checksState");
    return this.checks.get(id) ?? (contexts && contexts.length > 0 ? "pending" : "none");
  }
  async comment(issue: number, body: string) {
    this.calls.push("comment");
    this.comments.push({ issue, body });
  }
  async react(commentId: number, content: ReactionContent) {
    this.calls.push("react");
    const set = this.reactions.get(commentId) ?? new Set();
    this.reactions.set(commentId, set);
    if (set.has(content)) return "existed" as const;
    set.add(content);
    return "created" as const;
  }
  async permissionOf(login: string) {
    this.calls.push("permissionOf");
    return this.permissions.get(login) ?? "none";
  }
  async isTeamMember(team: string, login: string) {
    this.calls.push("isTeamMember");
    return this.teams.get(team)?.includes(login) ?? false;
  }
  async findIssue(title: string) {
    this.calls.push("findIssue");
    // As the adapter: the oldest open match, else any (a closed one is reopened, not replaced).
    const matches = this.issues.filter((i) => i.title === title).sort((a, b) => a.number - b.number);
    const issue = matches.find((i) => i.state === "open") ?? matches[0];
    return issue
      ? { number: issue.number, title: issue.title, body: issue.body, state: issue.state }
      : undefined;
  }
  async createIssue(input: { title: string; body: string }) {
    this.calls.push("createIssue");
    const number = this.#nextNumber();
    this.issues.push({ number, ...input, state: "open", comments: [] });
    return number;
  }
  async updateIssue(number: number, input: { body?: string; state?: "open" | "closed" }) {
    this.calls.push("updateIssue");
    Object.assign(
      this.issues.find((i) => i.number === number)!,
      input,
    );
  }
  async createCheckRun(input: CheckRunInput) {
    this.calls.push("createCheckRun");
    this.checkRuns.push(input);
  }
  async deploymentHealth(environment: string) {
    this.calls.push("deploymentHealth");
    return this.health.get(environment);
  }
}

/** A registry that knows tags → digests (and revisions), with no network. */
export class FakeRegistry implements RegistryReader {
  readonly tags = new Map<string, Map<string, { digest: string; revision?: string }>>();

  push(repository: string, tag: string, revision?: string): string {
    const digest = `sha256:${createHash("sha256")
      .update(`${repository}:${tag}:${revision ?? ""}`)
      .digest("hex")}`;
    const tags = this.tags.get(repository) ?? new Map();
    tags.set(tag, { digest, ...(revision ? { revision } : {}) });
    this.tags.set(repository, tags);
    return digest;
  }
  async listTags(repository: string) {
    return [...(this.tags.get(repository)?.keys() ?? [])];
  }
  async resolveDigest(repository: string, reference: string) {
    return (await this.describe(repository, reference)).digest;
  }
  async describe(repository: string, reference: string): Promise<ImageDescription> {
    for (const [tag, image] of this.tags.get(repository) ?? []) {
      if (tag === reference || image.digest === reference) {
        return {
          digest: image.digest,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          platforms: ["linux/amd64"],
          labels: {},
          ...(image.revision ? { revision: image.revision } : {}),
        };
      }
    }
    throw new UserError("tag-not-found", `${repository}:${reference} not found`);
  }
}

export function fakeDeps(
  github: GitHubRepoPort,
  registry: RegistryReader,
  now = new Date("2026-01-01T00:00:00Z"),
): AppDeps {
  return {
    github,
    registryFor: () => registry,
    now: () => now,
    log: { info: () => {}, warn: () => {}, error: () => {} },
    webUrl: "https://github.com",
    locks: new KeyedMutex(),
    appLogin: "ferry[bot]",
    sealKey: "test-seal-key",
  };
}

/** The shop's `.github/ferry.yml`: staging follows the registry and merges itself; prod takes staging's version on review. */
export function shopConfig(
  options: { registry?: string; source?: boolean; teams?: boolean; reporters?: string[] } = {},
): string {
  const { registry = "ghcr.io", source = false, teams = true } = options;
  const health = options.reporters ? `\n    health: { reporters: [${options.reporters.join(", ")}] }` : "";
  return `images:
  shop:
    repository: ${registry}/acme/shop${source ? "\n    source: acme/shop" : ""}
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging]
    update: auto
    merge: auto${health}
  prod:
    paths: [overlays/prod]
    from: staging
    update: manual
    merge: review
    promoters: { permission: maintain${teams ? ", teams: [acme/release]" : ""} }${health}
`;
}

export const CONFIG = shopConfig();

export function kustomization(tag: string, digest?: string): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
images:
  - name: ghcr.io/acme/shop
    newTag: "${tag}"${digest ? `\n    digest: ${digest}` : ""}
`;
}

/** A Kustomize overlay over `deployment.yaml` in the same folder, pinning `<registryHost>/acme/shop` to `tag`. */
export function shopOverlay(registryHost: string, tag: string): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
images:
  - name: ${registryHost}/acme/shop
    newTag: "${tag}"
`;
}

export function configRepo(staging = "1.7.0", prod = "1.7.0"): Record<string, string> {
  return {
    ".github/ferry.yml": CONFIG,
    "overlays/staging/kustomization.yaml": kustomization(staging),
    "overlays/prod/kustomization.yaml": kustomization(prod),
  };
}
