/**
 * JSON shapes of GitHub's REST API (api.github.com OpenAPI description), built from emulator
 * state. One builder per object; webhook payloads reuse them (webhook-shapes.ts trims what
 * the stricter webhook schemas do not allow).
 */
import { verificationOf } from "./commit-signing.js";
import type { ChangedFile, GitCommitObject, GitTreeEntry } from "./git-store.js";
import type {
  Account,
  App,
  CheckRun,
  CheckSuite,
  CommitStatus,
  Deployment,
  DeploymentStatus,
  Installation,
  Issue,
  IssueComment,
  Label,
  Reaction,
  Repo,
  Review,
  Team,
} from "./model.js";

export interface ShapeContext {
  /** API base URL, no trailing slash. */
  api: string;
  /** Web (html_url) base URL, no trailing slash. */
  web: string;
  account(login: string): Account;
  app(id: number): App;
}

export function simpleUser(c: ShapeContext, login: string) {
  const a = c.account(login);
  // Bot logins contain brackets (`ferry[bot]`), which GitHub percent-encodes in URLs.
  const url = `${c.api}/users/${encodeURIComponent(a.login)}`;
  return {
    login: a.login,
    id: a.id,
    node_id: a.nodeId,
    avatar_url: `${c.web}/avatars/u/${a.id}`,
    gravatar_id: "",
    url,
    html_url: `${c.web}/${encodeURIComponent(a.login)}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type: a.type,
    user_view_type: "public",
    site_admin: false,
  };
}

/** The public profile (`GET /users/{username}`); `private` adds what only the user sees (`GET /user`). */
export function publicUser(c: ShapeContext, login: string, options: { private?: boolean } = {}) {
  const a = c.account(login);
  const profile: Record<string, unknown> = {
    ...simpleUser(c, login),
    name: a.name,
    company: null,
    blog: "",
    location: null,
    email: null,
    hireable: null,
    bio: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: a.createdAt,
    updated_at: a.createdAt,
  };
  if (options.private) {
    Object.assign(profile, {
      collaborators: 0,
      disk_usage: 0,
      owned_private_repos: 0,
      private_gists: 0,
      total_private_repos: 0,
      two_factor_authentication: true,
    });
  }
  return profile;
}

/** The organization as a full team embeds it. */
export function teamOrganization(c: ShapeContext, login: string) {
  const a = c.account(login);
  return {
    ...organization(c, login),
    html_url: `${c.web}/${a.login}`,
    has_organization_projects: false,
    has_repository_projects: false,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    type: "Organization",
    created_at: a.createdAt,
    updated_at: a.createdAt,
    archived_at: null,
  };
}

export function organization(c: ShapeContext, login: string) {
  const a = c.account(login);
  const url = `${c.api}/orgs/${a.login}`;
  return {
    login: a.login,
    id: a.id,
    node_id: a.nodeId,
    url,
    repos_url: `${url}/repos`,
    events_url: `${url}/events`,
    hooks_url: `${url}/hooks`,
    issues_url: `${url}/issues`,
    members_url: `${url}/members{/member}`,
    public_members_url: `${url}/public_members{/member}`,
    avatar_url: `${c.web}/avatars/u/${a.id}`,
    description: null,
  };
}

export function repository(c: ShapeContext, r: Repo) {
  const full = `${r.owner}/${r.name}`;
  const url = `${c.api}/repos/${full}`;
  const openIssues = [...r.issues.values()].filter((i) => i.state === "open").length;
  return {
    id: r.id,
    node_id: r.nodeId,
    name: r.name,
    full_name: full,
    private: r.private,
    owner: simpleUser(c, r.owner),
    html_url: `${c.web}/${full}`,
    description: r.description,
    fork: r.parent !== undefined,
    url,
    forks_url: `${url}/forks`,
    keys_url: `${url}/keys{/key_id}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    teams_url: `${url}/teams`,
    hooks_url: `${url}/hooks`,
    issue_events_url: `${url}/issues/events{/number}`,
    events_url: `${url}/events`,
    assignees_url: `${url}/assignees{/user}`,
    branches_url: `${url}/branches{/branch}`,
    tags_url: `${url}/tags`,
    blobs_url: `${url}/git/blobs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    trees_url: `${url}/git/trees{/sha}`,
    statuses_url: `${url}/statuses/{sha}`,
    languages_url: `${url}/languages`,
    stargazers_url: `${url}/stargazers`,
    contributors_url: `${url}/contributors`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    commits_url: `${url}/commits{/sha}`,
    git_commits_url: `${url}/git/commits{/sha}`,
    comments_url: `${url}/comments{/number}`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    contents_url: `${url}/contents/{+path}`,
    compare_url: `${url}/compare/{base}...{head}`,
    merges_url: `${url}/merges`,
    archive_url: `${url}/{archive_format}{/ref}`,
    downloads_url: `${url}/downloads`,
    issues_url: `${url}/issues{/number}`,
    pulls_url: `${url}/pulls{/number}`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    labels_url: `${url}/labels{/name}`,
    releases_url: `${url}/releases{/id}`,
    deployments_url: `${url}/deployments`,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    pushed_at: r.pushedAt,
    git_url: `${c.web.replace(/^http/, "git")}/${full}.git`,
    ssh_url: `git@localhost:${full}.git`,
    clone_url: `${c.web}/${full}.git`,
    svn_url: `${c.web}/${full}`,
    homepage: null,
    size: 0,
    stargazers_count: 0,
    watchers_count: 0,
    language: null,
    has_issues: r.hasIssues,
    has_projects: false,
    has_downloads: true,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    forks_count: 0,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: openIssues,
    license: null,
    allow_forking: true,
    is_template: false,
    web_commit_signoff_required: false,
    topics: [] as string[],
    visibility: r.private ? "private" : "public",
    forks: 0,
    open_issues: openIssues,
    watchers: 0,
    default_branch: r.defaultBranch,
    allow_auto_merge: r.allowAutoMerge,
    delete_branch_on_merge: r.deleteBranchOnMerge,
    allow_merge_commit: r.allowMergeCommit,
    allow_squash_merge: r.allowSquashMerge,
    allow_rebase_merge: r.allowRebaseMerge,
    network_count: 0,
    subscribers_count: 0,
    custom_properties: {},
  };
}

const MINIMAL_REPOSITORY_FIELDS = [
  "archive_url",
  "assignees_url",
  "blobs_url",
  "branches_url",
  "collaborators_url",
  "comments_url",
  "commits_url",
  "compare_url",
  "contents_url",
  "contributors_url",
  "deployments_url",
  "description",
  "downloads_url",
  "events_url",
  "fork",
  "forks_url",
  "full_name",
  "git_commits_url",
  "git_refs_url",
  "git_tags_url",
  "hooks_url",
  "html_url",
  "id",
  "issue_comment_url",
  "issue_events_url",
  "issues_url",
  "keys_url",
  "labels_url",
  "languages_url",
  "merges_url",
  "milestones_url",
  "name",
  "node_id",
  "notifications_url",
  "owner",
  "private",
  "pulls_url",
  "releases_url",
  "stargazers_url",
  "statuses_url",
  "subscribers_url",
  "subscription_url",
  "tags_url",
  "teams_url",
  "trees_url",
  "url",
];

/** The short repository shape (minimal-repository / repository-lite). */
export function minimalRepository(c: ShapeContext, r: Repo) {
  const full = repository(c, r) as Record<string, unknown>;
  return Object.fromEntries(MINIMAL_REPOSITORY_FIELDS.map((key) => [key, full[key]]));
}

/** A commit as check suites and workflow runs embed it. */
export function simpleCommit(x: GitCommitObject) {
  return {
    id: x.sha,
    tree_id: x.tree,
    message: x.message.replace(/\n$/, ""),
    timestamp: x.committer.date,
    author: { name: x.author.name, email: x.author.email },
    committer: { name: x.committer.name, email: x.committer.email },
  };
}

export function label(c: ShapeContext, r: Repo, l: Label) {
  return {
    id: l.id,
    node_id: l.nodeId,
    url: `${c.api}/repos/${r.owner}/${r.name}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    color: l.color,
    default: l.default,
    description: l.description,
  };
}

function reactionRollup(url: string, reactions: Reaction[]) {
  const count = (content: string) => reactions.filter((x) => x.content === content).length;
  return {
    url,
    total_count: reactions.length,
    "+1": count("+1"),
    "-1": count("-1"),
    laugh: count("laugh"),
    confused: count("confused"),
    heart: count("heart"),
    hooray: count("hooray"),
    eyes: count("eyes"),
    rocket: count("rocket"),
  };
}

export function reaction(c: ShapeContext, x: Reaction) {
  return {
    id: x.id,
    node_id: x.nodeId,
    user: simpleUser(c, x.user),
    content: x.content,
    created_at: x.createdAt,
  };
}

function authorAssociation(r: Repo, login: string): string {
  if (login === r.owner) return "OWNER";
  const role = r.collaborators.get(login);
  return role ? "COLLABORATOR" : "NONE";
}

export function issue(c: ShapeContext, r: Repo, i: Issue) {
  const url = `${c.api}/repos/${r.owner}/${r.name}/issues/${i.number}`;
  const comments = [...r.comments.values()].filter((x) => x.issueNumber === i.number && !x.deleted).length;
  const shape: Record<string, unknown> = {
    id: i.id,
    node_id: i.nodeId,
    url,
    repository_url: `${c.api}/repos/${r.owner}/${r.name}`,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `${c.web}/${r.owner}/${r.name}/${i.pull ? "pull" : "issues"}/${i.number}`,
    number: i.number,
    state: i.state,
    state_reason: i.stateReason,
    title: i.title,
    body: i.body,
    user: simpleUser(c, i.user),
    labels: i.labels.map((name) => label(c, r, r.labels.get(name)!)),
    assignee: i.assignees[0] ? simpleUser(c, i.assignees[0]) : null,
    assignees: i.assignees.map((a) => simpleUser(c, a)),
    milestone: null,
    locked: i.locked,
    active_lock_reason: null,
    comments,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_at: i.closedAt,
    author_association: authorAssociation(r, i.user),
    reactions: reactionRollup(`${url}/reactions`, i.reactions),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
  };
  if (i.pull) {
    const pullUrl = `${c.api}/repos/${r.owner}/${r.name}/pulls/${i.number}`;
    shape.pull_request = {
      url: pullUrl,
      html_url: `${c.web}/${r.owner}/${r.name}/pull/${i.number}`,
      diff_url: `${c.web}/${r.owner}/${r.name}/pull/${i.number}.diff`,
      patch_url: `${c.web}/${r.owner}/${r.name}/pull/${i.number}.patch`,
      merged_at: i.pull.mergedAt,
    };
    shape.draft = i.pull.draft;
  }
  return shape;
}

export function issueComment(c: ShapeContext, r: Repo, x: IssueComment) {
  const url = `${c.api}/repos/${r.owner}/${r.name}/issues/comments/${x.id}`;
  const i = r.issues.get(x.issueNumber)!;
  return {
    id: x.id,
    node_id: x.nodeId,
    url,
    html_url: `${c.web}/${r.owner}/${r.name}/${i.pull ? "pull" : "issues"}/${x.issueNumber}#issuecomment-${x.id}`,
    body: x.body,
    user: simpleUser(c, x.user),
    created_at: x.createdAt,
    updated_at: x.updatedAt,
    issue_url: `${c.api}/repos/${r.owner}/${r.name}/issues/${x.issueNumber}`,
    author_association: authorAssociation(r, x.user),
    performed_via_github_app: x.appId !== undefined ? integration(c, c.app(x.appId)) : null,
    reactions: reactionRollup(`${url}/reactions`, x.reactions),
  };
}

export interface PullComputed {
  mergeable: boolean | null;
  mergeableState: string;
  rebaseable: boolean | null;
  commits: number;
  additions: number;
  deletions: number;
  changedFiles: number;
  baseSha: string;
}

function pullBranch(c: ShapeContext, r: Repo, ref: string, sha: string) {
  return { label: `${r.owner}:${ref}`, ref, sha, user: simpleUser(c, r.owner), repo: repository(c, r) };
}

/** The pull-request-simple shape (list endpoints); `pull` adds the counters and mergeability. */
export function pullSimple(c: ShapeContext, r: Repo, i: Issue, baseSha: string) {
  const p = i.pull!;
  const url = `${c.api}/repos/${r.owner}/${r.name}/pulls/${i.number}`;
  const issueUrl = `${c.api}/repos/${r.owner}/${r.name}/issues/${i.number}`;
  const html = `${c.web}/${r.owner}/${r.name}/pull/${i.number}`;
  const statusesUrl = `${c.api}/repos/${r.owner}/${r.name}/statuses/${p.headSha}`;
  return {
    url,
    id: i.pullId!,
    node_id: i.pullNodeId!,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issueUrl,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${c.api}/repos/${r.owner}/${r.name}/pulls/comments{/number}`,
    comments_url: `${issueUrl}/comments`,
    statuses_url: statusesUrl,
    number: i.number,
    state: i.state,
    locked: i.locked,
    title: i.title,
    user: simpleUser(c, i.user),
    body: i.body,
    labels: i.labels.map((name) => label(c, r, r.labels.get(name)!)),
    milestone: null,
    active_lock_reason: null,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_at: i.closedAt,
    merged_at: p.mergedAt,
    merge_commit_sha: p.mergeCommitSha,
    assignee: i.assignees[0] ? simpleUser(c, i.assignees[0]) : null,
    assignees: i.assignees.map((a) => simpleUser(c, a)),
    requested_reviewers: p.requestedReviewers.map((login) => simpleUser(c, login)),
    requested_teams: [] as unknown[],
    head: pullBranch(c, p.headRepo ?? r, p.headRef, p.headSha),
    base: pullBranch(c, r, p.baseRef, baseSha),
    _links: {
      self: { href: url },
      html: { href: html },
      issue: { href: issueUrl },
      comments: { href: `${issueUrl}/comments` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${c.api}/repos/${r.owner}/${r.name}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` },
      statuses: { href: statusesUrl },
    },
    author_association: authorAssociation(r, i.user),
    auto_merge: p.autoMerge
      ? {
          enabled_by: simpleUser(c, p.autoMerge.enabledBy),
          merge_method: p.autoMerge.method.toLowerCase(),
          commit_title: p.autoMerge.commitTitle ?? "",
          commit_message: p.autoMerge.commitMessage ?? "",
        }
      : null,
    draft: p.draft,
  };
}

export function pull(c: ShapeContext, r: Repo, i: Issue, computed: PullComputed) {
  const p = i.pull!;
  return {
    ...pullSimple(c, r, i, computed.baseSha),
    merged: p.merged,
    mergeable: computed.mergeable,
    rebaseable: computed.rebaseable,
    mergeable_state: computed.mergeableState,
    merged_by: p.mergedBy ? simpleUser(c, p.mergedBy) : null,
    comments: [...r.comments.values()].filter((x) => x.issueNumber === i.number && !x.deleted).length,
    review_comments: 0,
    maintainer_can_modify: p.maintainerCanModify,
    commits: computed.commits,
    additions: computed.additions,
    deletions: computed.deletions,
    changed_files: computed.changedFiles,
  };
}

export function review(c: ShapeContext, r: Repo, x: Review) {
  const pullUrl = `${c.api}/repos/${r.owner}/${r.name}/pulls/${x.pullNumber}`;
  const html = `${c.web}/${r.owner}/${r.name}/pull/${x.pullNumber}#pullrequestreview-${x.id}`;
  return {
    id: x.id,
    node_id: x.nodeId,
    user: simpleUser(c, x.user),
    body: x.body,
    state: x.state,
    html_url: html,
    pull_request_url: pullUrl,
    _links: { html: { href: html }, pull_request: { href: pullUrl } },
    submitted_at: x.submittedAt,
    commit_id: x.commitId,
    author_association: authorAssociation(r, x.user),
  };
}

export function gitCommit(c: ShapeContext, r: Repo, x: GitCommitObject) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  return {
    sha: x.sha,
    node_id: nodeIdFor("C", x.sha),
    url: `${base}/git/commits/${x.sha}`,
    html_url: `${c.web}/${r.owner}/${r.name}/commit/${x.sha}`,
    author: { ...x.author },
    committer: { ...x.committer },
    tree: { sha: x.tree, url: `${base}/git/trees/${x.tree}` },
    message: x.message.replace(/\n$/, ""),
    parents: x.parents.map((sha) => ({
      sha,
      url: `${base}/git/commits/${sha}`,
      html_url: `${c.web}/${r.owner}/${r.name}/commit/${sha}`,
    })),
    verification: verificationOf(r, x.sha),
  };
}

/** The "commit" shape of the commits and compare endpoints. `loginFor` maps a git email to an account. */
export function commit(
  c: ShapeContext,
  r: Repo,
  x: GitCommitObject,
  loginFor: (email: string) => string | undefined,
  files?: ReturnType<typeof diffEntry>[],
) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  const author = loginFor(x.author.email);
  const committer = loginFor(x.committer.email);
  const shape: Record<string, unknown> = {
    url: `${base}/commits/${x.sha}`,
    sha: x.sha,
    node_id: nodeIdFor("C", x.sha),
    html_url: `${c.web}/${r.owner}/${r.name}/commit/${x.sha}`,
    comments_url: `${base}/commits/${x.sha}/comments`,
    commit: {
      url: `${base}/git/commits/${x.sha}`,
      author: { ...x.author },
      committer: { ...x.committer },
      message: x.message.replace(/\n$/, ""),
      comment_count: 0,
      tree: { sha: x.tree, url: `${base}/git/trees/${x.tree}` },
      verification: verificationOf(r, x.sha),
    },
    author: author ? simpleUser(c, author) : null,
    committer: committer ? simpleUser(c, committer) : null,
    parents: x.parents.map((sha) => ({
      sha,
      url: `${base}/commits/${sha}`,
      html_url: `${c.web}/${r.owner}/${r.name}/commit/${sha}`,
    })),
  };
  if (files) {
    const additions = files.reduce((sum, f) => sum + f.additions, 0);
    const deletions = files.reduce((sum, f) => sum + f.deletions, 0);
    shape.stats = { additions, deletions, total: additions + deletions };
    shape.files = files;
  }
  return shape;
}

export function diffEntry(c: ShapeContext, r: Repo, ref: string, f: ChangedFile, patch: string | undefined) {
  const entry: Record<string, unknown> & { additions: number; deletions: number } = {
    sha: f.sha,
    filename: f.path,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    blob_url: `${c.web}/${r.owner}/${r.name}/blob/${ref}/${f.path}`,
    raw_url: `${c.web}/${r.owner}/${r.name}/raw/${ref}/${f.path}`,
    contents_url: `${c.api}/repos/${r.owner}/${r.name}/contents/${f.path}?ref=${ref}`,
  };
  if (patch !== undefined) entry.patch = patch;
  if (f.previousPath) entry.previous_filename = f.previousPath;
  return entry;
}

export function treeEntry(c: ShapeContext, r: Repo, e: GitTreeEntry) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  const shape: Record<string, unknown> = { path: e.path, mode: e.mode, type: e.type, sha: e.sha };
  if (e.type === "blob") {
    shape.size = e.size;
    shape.url = `${base}/git/blobs/${e.sha}`;
  } else if (e.type === "tree") shape.url = `${base}/git/trees/${e.sha}`;
  return shape;
}

export function gitRef(c: ShapeContext, r: Repo, ref: string, sha: string, type: string) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  return {
    ref,
    node_id: nodeIdFor("REF", `${r.id}:${ref}`),
    url: `${base}/git/${ref}`,
    object: { sha, type, url: `${base}/git/${type === "tag" ? "tags" : "commits"}/${sha}` },
  };
}

export function contentEntry(c: ShapeContext, r: Repo, ref: string, e: GitTreeEntry, content?: Buffer) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  const type =
    e.type === "tree" ? "dir" : e.type === "commit" ? "submodule" : e.mode === "120000" ? "symlink" : "file";
  const selfUrl = `${base}/contents/${e.path}?ref=${encodeURIComponent(ref)}`;
  const gitUrl = `${base}/git/${e.type === "tree" ? "trees" : "blobs"}/${e.sha}`;
  const htmlUrl = `${c.web}/${r.owner}/${r.name}/${e.type === "tree" ? "tree" : "blob"}/${ref}/${e.path}`;
  const shape: Record<string, unknown> = {
    type,
    size: e.size ?? 0,
    name: e.path.split("/").pop(),
    path: e.path,
    sha: e.sha,
    url: selfUrl,
    git_url: gitUrl,
    html_url: htmlUrl,
    download_url: type === "file" ? `${c.web}/${r.owner}/${r.name}/raw/${ref}/${e.path}` : null,
    _links: { self: selfUrl, git: gitUrl, html: htmlUrl },
  };
  if (content) {
    // GitHub wraps base64 at 60 columns with "\n".
    shape.content = (content.toString("base64").match(/.{1,60}/g) ?? [""]).join("\n") + "\n";
    shape.encoding = "base64";
  }
  return shape;
}

export function integration(c: ShapeContext, app: App) {
  return {
    id: app.id,
    slug: app.slug,
    node_id: app.nodeId,
    client_id: app.clientId,
    owner: simpleUser(c, app.owner),
    name: app.name,
    description: "",
    external_url: `${c.web}/apps/${app.slug}`,
    html_url: `${c.web}/apps/${app.slug}`,
    created_at: app.createdAt,
    updated_at: app.createdAt,
    permissions: { ...app.permissions },
    events: [...app.events],
  };
}

export function installation(c: ShapeContext, inst: Installation, app: App) {
  const account = c.account(inst.account);
  return {
    id: inst.id,
    account: simpleUser(c, inst.account),
    repository_selection: inst.repositories ? "selected" : "all",
    access_tokens_url: `${c.api}/app/installations/${inst.id}/access_tokens`,
    repositories_url: `${c.api}/installation/repositories`,
    html_url: `${c.web}/${account.type === "Organization" ? `organizations/${account.login}/` : ""}settings/installations/${inst.id}`,
    app_id: app.id,
    app_slug: app.slug,
    target_id: account.id,
    target_type: account.type === "Organization" ? "Organization" : "User",
    permissions: { ...inst.permissions },
    events: [...inst.events],
    created_at: inst.createdAt,
    updated_at: inst.createdAt,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [] as string[],
    suspended_by: null,
    suspended_at: null,
  };
}

export function checkSuite(
  c: ShapeContext,
  r: Repo,
  s: CheckSuite,
  pulls: unknown[],
  runsCount: number,
  headCommit: GitCommitObject,
) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  return {
    id: s.id,
    node_id: s.nodeId,
    head_branch: s.headBranch,
    head_sha: s.headSha,
    status: s.status,
    conclusion: s.conclusion,
    url: `${base}/check-suites/${s.id}`,
    before: null,
    after: s.headSha,
    pull_requests: pulls,
    app: integration(c, c.app(s.appId)),
    repository: minimalRepository(c, r),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    head_commit: simpleCommit(headCommit),
    latest_check_runs_count: runsCount,
    check_runs_url: `${base}/check-suites/${s.id}/check-runs`,
    rerequestable: true,
    runs_rerequestable: true,
  };
}

export function checkRun(c: ShapeContext, r: Repo, x: CheckRun, pulls: unknown[]) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  return {
    id: x.id,
    node_id: x.nodeId,
    head_sha: x.headSha,
    external_id: x.externalId,
    url: `${base}/check-runs/${x.id}`,
    html_url: `${c.web}/${r.owner}/${r.name}/runs/${x.id}`,
    details_url: x.detailsUrl,
    status: x.status,
    conclusion: x.conclusion,
    started_at: x.startedAt,
    completed_at: x.completedAt,
    output: {
      title: x.output.title,
      summary: x.output.summary,
      text: x.output.text,
      annotations_count: x.output.annotations.length,
      annotations_url: `${base}/check-runs/${x.id}/annotations`,
    },
    name: x.name,
    check_suite: { id: x.suiteId },
    app: integration(c, c.app(x.appId)),
    pull_requests: pulls,
  };
}

export function commitStatus(c: ShapeContext, r: Repo, s: CommitStatus) {
  return {
    url: `${c.api}/repos/${r.owner}/${r.name}/statuses/${s.sha}`,
    avatar_url: `${c.web}/avatars/u/${c.account(s.creator).id}`,
    id: s.id,
    node_id: s.nodeId,
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    creator: simpleUser(c, s.creator),
  };
}

export function deployment(c: ShapeContext, r: Repo, d: Deployment) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  return {
    url: `${base}/deployments/${d.id}`,
    id: d.id,
    node_id: d.nodeId,
    sha: d.sha,
    ref: d.ref,
    task: d.task,
    payload: d.payload,
    original_environment: d.environment,
    environment: d.environment,
    description: d.description,
    creator: simpleUser(c, d.creator),
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    statuses_url: `${base}/deployments/${d.id}/statuses`,
    repository_url: base,
    transient_environment: d.transientEnvironment,
    production_environment: d.productionEnvironment,
    performed_via_github_app: d.appId !== undefined ? integration(c, c.app(d.appId)) : null,
  };
}

export function deploymentStatus(c: ShapeContext, r: Repo, s: DeploymentStatus) {
  const base = `${c.api}/repos/${r.owner}/${r.name}`;
  return {
    url: `${base}/deployments/${s.deploymentId}/statuses/${s.id}`,
    id: s.id,
    node_id: s.nodeId,
    state: s.state,
    creator: simpleUser(c, s.creator),
    description: s.description,
    environment: s.environment,
    target_url: s.targetUrl,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    deployment_url: `${base}/deployments/${s.deploymentId}`,
    repository_url: base,
    environment_url: s.environmentUrl,
    log_url: s.logUrl,
    performed_via_github_app: s.appId !== undefined ? integration(c, c.app(s.appId)) : null,
  };
}

export function team(c: ShapeContext, t: Team) {
  const url = `${c.api}/orgs/${t.org}/teams/${t.slug}`;
  return {
    id: t.id,
    node_id: t.nodeId,
    url,
    html_url: `${c.web}/orgs/${t.org}/teams/${t.slug}`,
    name: t.name,
    slug: t.slug,
    description: null,
    privacy: "closed",
    notification_setting: "notifications_enabled",
    permission: "pull",
    members_url: `${url}/members{/member}`,
    repositories_url: `${url}/repos`,
    type: "organization",
    parent: null,
  };
}

/** GitHub node ids are opaque base64 strings; these are unique per kind and id. */
export function nodeIdFor(kind: string, id: number | string): string {
  return `${kind}_${Buffer.from(`${kind}:${id}`).toString("base64url")}`;
}
