/** Repositories, contents, the Git Data API (blobs, trees, commits, refs), branches, protection, compare, commits. */
import { rivalPush } from "./emulator-act-as.js";
import { repositoryWithNetwork } from "./forks.js";
import { onRefChanged } from "./emulator-pull-effects.js";
import { authorizeRepo, roleOf } from "./emulator-repos.js";
import { isBranchProtected } from "./branch-coverage.js";
import { signApiCommit } from "./commit-signing.js";
import { refuseRuleViolations } from "./rulesets.js";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA, type GitIdentity, type GitTagObject, type TreeChange } from "./git-store.js";
import type { Repo } from "./model.js";
import {
  ApiError,
  notFound,
  paginate,
  requireString,
  validationFailed,
  type RequestContext,
} from "./router.js";
import * as shape from "./shapes.js";
import * as repos from "./emulator-repos.js";

const SHA = /^[0-9a-f]{40}$/;
/** The contents API inlines file content up to 1 MB, and serves files up to 100 MB at all. */
const CONTENTS_MAX_INLINE_BYTES = 1024 * 1024;
const CONTENTS_MAX_BYTES = 100 * 1024 * 1024;

function identityFrom(value: unknown, fallback: GitIdentity): GitIdentity {
  if (!value || typeof value !== "object") return fallback;
  const v = value as { name?: string; email?: string; date?: string };
  if (!v.name || !v.email) throw validationFailed('Invalid request.\n\n"name" and "email" are required.');
  return { name: v.name, email: v.email, date: v.date ? new Date(v.date).toISOString() : fallback.date };
}

async function resolveOr404(repo: Repo, rev: string): Promise<string> {
  const sha = await repo.git.resolveCommit(rev);
  if (!sha) throw new ApiError(404, `No commit found for the ref ${rev}`);
  return sha;
}

/**
 * The contents API's `ref`: "The name of the commit/branch/tag"
 * (https://docs.github.com/en/rest/repos/contents#get-repository-content). The emulator takes only
 * those (a SHA, a branch or a tag, short or as `refs/heads/…`/`refs/tags/…`): a ref in another
 * namespace, such as `refs/ferry/state`, answers 404 "No commit found for the ref …"; its commit is
 * read through `GET /git/ref/…` and then by SHA.
 */
async function resolveContentsRef(repo: Repo, rev: string): Promise<string> {
  const candidates = /^[0-9a-f]{7,40}$/i.test(rev)
    ? [`refs/heads/${rev}`, `refs/tags/${rev}`, rev]
    : /^refs\/(heads|tags)\//.test(rev)
      ? [rev]
      : rev.startsWith("refs/")
        ? []
        : [`refs/heads/${rev}`, `refs/tags/${rev}`];
  for (const candidate of candidates) {
    const sha = await repo.git.resolveCommit(candidate);
    if (sha) return sha;
  }
  throw new ApiError(404, `No commit found for the ref ${rev}`);
}

/** Moves a branch as a user would by pushing, firing the same events. Throws 409 when someone else moved it first. */
export async function writeFilesCommit(
  emu: GitHubEmulator,
  repo: Repo,
  branch: string,
  changes: TreeChange[],
  message: string,
  login: string,
  options: { author?: GitIdentity; committer?: GitIdentity; expectedHead?: string } = {},
): Promise<{ sha: string; tree: string; parent: string | undefined }> {
  const ref = `refs/heads/${branch}`;
  const parent = await repo.git.readRef(ref);
  if (options.expectedHead !== undefined && parent !== options.expectedHead)
    throw new ApiError(409, "Branch was modified");
  const baseTree = parent ? (await repo.git.readCommit(parent)).tree : undefined;
  const tree = await repo.git.writeTree(baseTree, changes);
  const author = options.author ?? emu.identityOf(login);
  const sha = await repo.git.commitTree({
    tree,
    parents: parent ? [parent] : [],
    message: message.endsWith("\n") ? message : `${message}\n`,
    author,
    committer: options.committer ?? author,
  });
  if (!(await repo.git.compareAndSwapRef(ref, sha, parent ?? ZERO_SHA)))
    throw new ApiError(409, `${branch} was modified concurrently`);
  await onRefChanged(emu, repo, ref, parent ?? ZERO_SHA, sha, login);
  return { sha, tree, parent };
}

/**
 * A GitHub App may not create or update a workflow file without the `workflows` permission, and
 * GitHub judges that by what the ref update changes, not by who wrote the commits: moving a PR
 * branch onto a base that changed `.github/workflows/*` is refused too
 * (https://github.com/chdsbd/kodiak/issues/853, https://github.com/Mergifyio/mergify/issues/5055,
 * https://github.com/wildfly/wildfly.org/issues/549). The answer's words are GitHub's; its status
 * on the refs API is not documented, so 422 (the refs API's refusal status) is assumed.
 */
export async function refuseWorkflowChange(
  emu: GitHubEmulator,
  ctx: RequestContext,
  repo: Repo,
  ref: string,
  before: string | undefined,
  after: string,
): Promise<void> {
  if (ctx.actor.kind !== "installation" || !ref.startsWith("refs/heads/")) return;
  if (ctx.actor.permissions.workflows === "write") return;
  const defaultTip = await repo.git.readRef(`refs/heads/${repo.defaultBranch}`);
  // A new branch is judged by what it adds to the default branch.
  const from = before ?? (defaultTip ? await repo.git.mergeBase(defaultTip, after) : undefined);
  if (!from) return;
  const touched = (await repo.git.changedFiles(from, after)).find((file) =>
    [file.path, file.previousPath].some((path) => path?.startsWith(".github/workflows/")),
  );
  if (touched)
    throw validationFailed(
      `refusing to allow a GitHub App to create or update workflow \`${touched.path}\` without \`workflows\` permission`,
    );
}

export function registerRepoRoutes(emu: GitHubEmulator): void {
  const r = emu.router;
  const c = () => emu.shapes;

  r.add("GET", "/repos/:owner/:repo", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "metadata", "read", "read");
    const body = repositoryWithNetwork(emu, repo);
    if (ctx.actor.kind === "user") {
      const role = roleOf(emu, repo, ctx.actor.login);
      body.permissions = {
        admin: role === "admin",
        maintain: ["admin", "maintain"].includes(role),
        push: ["admin", "maintain", "write"].includes(role),
        triage: role !== "read" && role !== "none",
        pull: role !== "none",
      };
    }
    return { body };
  });

  // ------------------------------------------------------------------ contents

  r.add("GET", "/repos/:owner/:repo/contents", (ctx) => getContents(ctx, ""));
  r.add("GET", "/repos/:owner/:repo/contents/*path", (ctx) => getContents(ctx, ctx.params.path!));

  async function getContents(ctx: RequestContext, path: string) {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const ref = ctx.query.get("ref") ?? repo.defaultBranch;
    const sha = await resolveContentsRef(repo, ref);
    const commit = await repo.git.readCommit(sha);
    const entry = await repo.git.entryAt(commit.tree, path);
    if (!entry) throw notFound();
    if (entry.type === "tree") {
      const children = await repo.git.listTree(entry.sha, false);
      return {
        body: children.map((child) =>
          shape.contentEntry(c(), repo, ref, {
            ...child,
            path: path ? `${path.replace(/\/+$/, "")}/${child.path}` : child.path,
          }),
        ),
      };
    }
    const content = entry.type === "blob" ? await repo.git.readBlob(entry.sha) : undefined;
    // GitHub serves file content here up to 1 MB; between 1 and 100 MB the object answer has
    // `content: ""` and `encoding: "none"` (the raw media type or the blob API serve those), and
    // past 100 MB the endpoint refuses (GitHub changelog 2022-05-03 "Increased file size limit when
    // retrieving file contents via REST API"; palantir/go-githubapp#227). The refusal's wording is
    // not documented: the status and the `too_large` code are what clients see.
    if (content && content.length > CONTENTS_MAX_INLINE_BYTES) {
      if (content.length > CONTENTS_MAX_BYTES)
        throw new ApiError(
          403,
          "This API returns blobs up to 100 MB in size. The requested blob is too large to fetch via the API.",
          [{ resource: "Blob", field: "data", code: "too_large" }],
        );
      return { body: { ...shape.contentEntry(c(), repo, ref, entry), content: "", encoding: "none" } };
    }
    return { body: shape.contentEntry(c(), repo, ref, entry, content) };
  }

  r.add("PUT", "/repos/:owner/:repo/contents/*path", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const path = ctx.params.path!;
    const message = requireString(ctx.body, "message", "Content");
    const content = requireString(ctx.body, "content", "Content");
    const branch = typeof ctx.body.branch === "string" ? ctx.body.branch : repo.defaultBranch;
    const head = await repo.git.readRef(`refs/heads/${branch}`);
    if (!head) throw new ApiError(404, `Branch ${branch} not found`);
    const existing = await repo.git.entryAt((await repo.git.readCommit(head)).tree, path);
    const givenSha = typeof ctx.body.sha === "string" ? ctx.body.sha : undefined;
    if (existing && givenSha === undefined)
      throw validationFailed('Invalid request.\n\n"sha" wasn\'t supplied.');
    if (existing && givenSha !== existing.sha) throw new ApiError(409, `${path} does not match ${givenSha}`);
    const author = identityFrom(ctx.body.author, emu.identityOf(login));
    const committer = identityFrom(ctx.body.committer, author);
    const written = await writeFilesCommit(
      emu,
      repo,
      branch,
      [{ path, content: Buffer.from(content, "base64") }],
      message,
      login,
      { author, committer, expectedHead: head },
    );
    const entry = (await repo.git.entryAt(written.tree, path))!;
    const commitObject = await repo.git.readCommit(written.sha);
    const contentShape = shape.contentEntry(c(), repo, branch, entry);
    return {
      status: existing ? 200 : 201,
      body: { content: contentShape, commit: shape.gitCommit(c(), repo, commitObject) },
    };
  });

  r.add("DELETE", "/repos/:owner/:repo/contents/*path", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const path = ctx.params.path!;
    const message = requireString(ctx.body, "message", "Content");
    const givenSha = requireString(ctx.body, "sha", "Content");
    const branch = typeof ctx.body.branch === "string" ? ctx.body.branch : repo.defaultBranch;
    const head = await repo.git.readRef(`refs/heads/${branch}`);
    if (!head) throw new ApiError(404, `Branch ${branch} not found`);
    const existing = await repo.git.entryAt((await repo.git.readCommit(head)).tree, path);
    if (!existing) throw notFound();
    if (existing.sha !== givenSha) throw new ApiError(409, `${path} does not match ${givenSha}`);
    const written = await writeFilesCommit(emu, repo, branch, [{ path, sha: null }], message, login, {
      expectedHead: head,
    });
    return {
      body: { content: null, commit: shape.gitCommit(c(), repo, await repo.git.readCommit(written.sha)) },
    };
  });

  // ------------------------------------------------------------------ git data

  r.add("POST", "/repos/:owner/:repo/git/blobs", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    if (typeof ctx.body.content !== "string")
      throw validationFailed('Invalid request.\n\n"content" wasn\'t supplied.');
    const encoding = ctx.body.encoding ?? "utf-8";
    if (encoding !== "utf-8" && encoding !== "utf8" && encoding !== "base64")
      throw validationFailed(`encoding must be "utf-8" or "base64"`);
    const bytes =
      encoding === "base64" ? Buffer.from(ctx.body.content, "base64") : Buffer.from(ctx.body.content, "utf8");
    const sha = await repo.git.writeBlob(bytes);
    return {
      status: 201,
      body: { url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/git/blobs/${sha}`, sha },
    };
  });

  r.add("GET", "/repos/:owner/:repo/git/blobs/:sha", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const sha = ctx.params.sha!;
    if ((await repo.git.objectType(sha)) !== "blob") throw notFound();
    const bytes = await repo.git.readBlob(sha);
    return {
      body: {
        sha,
        node_id: shape.nodeIdFor("B", sha),
        size: bytes.length,
        url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/git/blobs/${sha}`,
        content: (bytes.toString("base64").match(/.{1,60}/g) ?? [""]).join("\n") + "\n",
        encoding: "base64",
      },
    };
  });

  const treeBody = async (repo: Repo, sha: string, recursive: boolean) => {
    const entries = await repo.git.listTree(sha, recursive);
    // Past the limit a recursive listing is cut and says so (`Repo.treeEntryLimit`).
    const truncated = recursive && entries.length > repo.treeEntryLimit;
    return {
      sha,
      url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/git/trees/${sha}`,
      tree: (truncated ? entries.slice(0, repo.treeEntryLimit) : entries).map((e) =>
        shape.treeEntry(c(), repo, e),
      ),
      truncated,
    };
  };

  r.add("POST", "/repos/:owner/:repo/git/trees", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const entries = ctx.body.tree;
    if (!Array.isArray(entries)) throw validationFailed("Invalid tree info");
    const baseTree = typeof ctx.body.base_tree === "string" ? ctx.body.base_tree : undefined;
    if (baseTree !== undefined && (await repo.git.objectType(baseTree)) !== "tree") {
      // GitHub also accepts a commit here and uses its tree.
      const commitSha = await repo.git.resolveCommit(baseTree);
      if (!commitSha) throw validationFailed("Invalid request.\n\nbase_tree is not a valid tree oid");
    }
    const resolvedBase =
      baseTree && (await repo.git.objectType(baseTree)) === "commit"
        ? (await repo.git.readCommit(baseTree)).tree
        : baseTree;
    const changes: TreeChange[] = [];
    for (const raw of entries as Record<string, unknown>[]) {
      const path = raw.path;
      const mode = raw.mode;
      if (
        typeof path !== "string" ||
        path === "" ||
        path.startsWith("/") ||
        path.split("/").some((s) => s === "" || s === "." || s === "..")
      ) {
        throw validationFailed("Invalid tree info", [{ resource: "Tree", field: "path", code: "invalid" }]);
      }
      if (typeof mode !== "string" || !["100644", "100755", "040000", "160000", "120000"].includes(mode)) {
        throw validationFailed(`Invalid tree info`, [{ resource: "Tree", field: "mode", code: "invalid" }]);
      }
      if (raw.sha === null) changes.push({ path, sha: null, mode });
      else if (typeof raw.content === "string") changes.push({ path, mode, content: raw.content });
      else if (typeof raw.sha === "string") {
        const type = await repo.git.objectType(raw.sha);
        const wanted = mode === "040000" ? "tree" : mode === "160000" ? "commit" : "blob";
        if (type !== wanted && mode !== "160000")
          throw validationFailed(`Invalid tree info`, [
            {
              resource: "Tree",
              field: "sha",
              code: "invalid",
              message: `${raw.sha} is not a valid ${wanted}`,
            },
          ]);
        changes.push({ path, mode, sha: raw.sha });
      } else
        throw validationFailed("Invalid tree info", [
          { resource: "Tree", field: "sha", code: "missing_field" },
        ]);
    }
    const sha = await repo.git.writeTree(resolvedBase, changes);
    return { status: 201, body: await treeBody(repo, sha, false) };
  });

  r.add("GET", "/repos/:owner/:repo/git/trees/*sha", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    let sha = ctx.params.sha!;
    const type = await repo.git.objectType(sha);
    if (type === "commit") sha = (await repo.git.readCommit(sha)).tree;
    else if (type !== "tree") {
      const commit = await repo.git.resolveCommit(sha);
      if (!commit) throw notFound();
      sha = (await repo.git.readCommit(commit)).tree;
    }
    const recursive =
      ctx.query.has("recursive") && !["0", "false"].includes(ctx.query.get("recursive") ?? "");
    return { body: await treeBody(repo, sha, recursive) };
  });

  r.add("POST", "/repos/:owner/:repo/git/commits", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const message = requireString(ctx.body, "message", "Commit");
    const tree = requireString(ctx.body, "tree", "Commit");
    if ((await repo.git.objectType(tree)) !== "tree") throw validationFailed("Tree SHA does not exist");
    const parents = Array.isArray(ctx.body.parents) ? (ctx.body.parents as unknown[]) : [];
    for (const parent of parents) {
      if (typeof parent !== "string" || (await repo.git.objectType(parent)) !== "commit")
        throw validationFailed("Parent SHA does not exist or is not a commit object");
    }
    const author = identityFrom(ctx.body.author, emu.identityOf(login));
    const committer = identityFrom(ctx.body.committer, author);
    const sha = await repo.git.commitTree({ tree, parents: parents as string[], message, author, committer });
    if (ctx.actor.kind === "installation") signApiCommit(repo, sha, ctx.body);
    return { status: 201, body: shape.gitCommit(c(), repo, await repo.git.readCommit(sha)) };
  });

  r.add("GET", "/repos/:owner/:repo/git/commits/:sha", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    if (!SHA.test(ctx.params.sha!) || (await repo.git.objectType(ctx.params.sha!)) !== "commit")
      throw notFound();
    return { body: shape.gitCommit(c(), repo, await repo.git.readCommit(ctx.params.sha!)) };
  });

  const tagShape = (repo: Repo, t: GitTagObject) => {
    const base = `${emu.apiUrl}/repos/${repo.owner}/${repo.name}`;
    return {
      node_id: shape.nodeIdFor("TAG", t.sha),
      tag: t.tag,
      sha: t.sha,
      url: `${base}/git/tags/${t.sha}`,
      message: t.message,
      tagger: { ...t.tagger },
      object: {
        type: t.type,
        sha: t.object,
        url: `${base}/git/${t.type === "tag" ? "tags" : `${t.type}s`}/${t.object}`,
      },
      verification: {
        verified: false,
        reason: "unsigned",
        signature: null,
        payload: null,
        verified_at: null,
      },
    };
  };

  r.add("POST", "/repos/:owner/:repo/git/tags", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const tag = requireString(ctx.body, "tag", "Tag");
    const message = typeof ctx.body.message === "string" ? ctx.body.message : "";
    const object = requireString(ctx.body, "object", "Tag");
    const type = requireString(ctx.body, "type", "Tag");
    if ((await repo.git.objectType(object)) !== type) throw validationFailed("Object does not exist");
    const sha = await repo.git.writeTag({
      object,
      type,
      tag,
      message,
      tagger: identityFrom(ctx.body.tagger, emu.identityOf(login)),
    });
    return { status: 201, body: tagShape(repo, await repo.git.readTag(sha)) };
  });

  r.add("GET", "/repos/:owner/:repo/git/tags/:sha", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    if ((await repo.git.objectType(ctx.params.sha!)) !== "tag") throw notFound();
    return { body: tagShape(repo, await repo.git.readTag(ctx.params.sha!)) };
  });

  // ------------------------------------------------------------------ refs

  const refShape = async (repo: Repo, fullRef: string, sha: string) =>
    shape.gitRef(c(), repo, fullRef, sha, (await repo.git.objectType(sha)) ?? "commit");

  const getRef = async (ctx: RequestContext) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const ref = ctx.params.ref!.replace(/^refs\//, "");
    if (emu.faults.missFresh(`ref:${repo.id}:${ref}`)) throw notFound();
    const sha = await repo.git.readRef(`refs/${ref}`);
    if (!sha) throw notFound();
    return { body: await refShape(repo, `refs/${ref}`, sha) };
  };
  r.add("GET", "/repos/:owner/:repo/git/ref/*ref", getRef);

  const matching = async (ctx: RequestContext, prefix: string) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const refs = (await repo.git.listRefs("refs/")).filter((x) => x.ref.startsWith(`refs/${prefix}`));
    return paginate(
      ctx,
      refs.map((x) => shape.gitRef(c(), repo, x.ref, x.sha, x.type)),
    );
  };
  r.add("GET", "/repos/:owner/:repo/git/matching-refs/*ref", (ctx) =>
    matching(ctx, ctx.params.ref!.replace(/^refs\//, "")),
  );
  r.add("GET", "/repos/:owner/:repo/git/matching-refs", (ctx) => matching(ctx, ""));
  // The legacy list endpoint: an exact ref answers one object, a prefix answers an array.
  r.add("GET", "/repos/:owner/:repo/git/refs/*ref", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const ref = ctx.params.ref!.replace(/^refs\//, "");
    const exact = await repo.git.readRef(`refs/${ref}`);
    if (exact) return { body: await refShape(repo, `refs/${ref}`, exact) };
    const reply = await matching(ctx, `${ref}/`);
    if ((reply.body as unknown[]).length === 0) throw notFound();
    return reply;
  });
  r.add("GET", "/repos/:owner/:repo/git/refs", (ctx) => matching(ctx, ""));

  r.add("POST", "/repos/:owner/:repo/git/refs", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const ref = requireString(ctx.body, "ref", "Reference");
    const sha = requireString(ctx.body, "sha", "Reference");
    if (
      !ref.startsWith("refs/") ||
      ref.split("/").length < 3 ||
      ref.endsWith("/") ||
      /\.\.|[\s~^:?*[\\]|@\{|\.lock$/.test(ref)
    ) {
      throw validationFailed("Reference name must start with 'refs/' and have at least two slashes.");
    }
    if (!(await repo.git.objectType(sha))) throw validationFailed("Object does not exist");
    await refuseWorkflowChange(emu, ctx, repo, ref, undefined, sha);
    if (!(await repo.git.readRef(ref))) await refuseRuleViolations(emu, ctx.actor, repo, ref, undefined, sha);
    if (!(await repo.git.compareAndSwapRef(ref, sha, ZERO_SHA)))
      throw validationFailed("Reference already exists");
    emu.faults.created(`ref:${repo.id}:${ref.slice(5)}`);
    await onRefChanged(emu, repo, ref, ZERO_SHA, sha, login);
    return {
      status: 201,
      body: await refShape(repo, ref, sha),
      headers: { location: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/git/${ref}` },
    };
  });

  r.add("PATCH", "/repos/:owner/:repo/git/refs/*ref", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const ref = `refs/${ctx.params.ref!.replace(/^refs\//, "")}`;
    const sha = requireString(ctx.body, "sha", "Reference");
    if (emu.faults.takeRefRace(ref.slice(5))) await rivalPush(emu, repo, ref);
    const current = await repo.git.readRef(ref);
    if (!current) throw validationFailed("Reference does not exist");
    if ((await repo.git.objectType(sha)) === undefined) throw validationFailed("Object does not exist");
    if (current === sha) return { body: await refShape(repo, ref, sha) };
    const force = ctx.body.force === true;
    if (!force && !(await repo.git.isAncestor(current, sha)))
      throw validationFailed("Update is not a fast forward");
    await refuseWorkflowChange(emu, ctx, repo, ref, current, sha);
    await refuseRuleViolations(emu, ctx.actor, repo, ref, current, sha);
    if (!(await repo.git.compareAndSwapRef(ref, sha, current)))
      throw validationFailed("Reference update failed");
    await onRefChanged(emu, repo, ref, current, sha, login, { forced: force });
    return { body: await refShape(repo, ref, sha) };
  });

  r.add("DELETE", "/repos/:owner/:repo/git/refs/*ref", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const ref = `refs/${ctx.params.ref!.replace(/^refs\//, "")}`;
    const current = await repo.git.readRef(ref);
    if (!current) throw validationFailed("Reference does not exist");
    await refuseRuleViolations(emu, ctx.actor, repo, ref, current, undefined);
    if (!(await repo.git.deleteRef(ref, current))) throw validationFailed("Reference update failed");
    await onRefChanged(emu, repo, ref, current, ZERO_SHA, login);
    return { status: 204 };
  });

  // ------------------------------------------------------------------ branches and protection

  r.add("GET", "/repos/:owner/:repo/branches", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const refs = await repo.git.listRefs("refs/heads/");
    let branches = refs.map((x) => ({ name: x.ref.slice("refs/heads/".length), sha: x.sha }));
    if (ctx.query.get("protected") === "true")
      branches = branches.filter((b) => isBranchProtected(repo, b.name));
    return paginate(
      ctx,
      branches.map((b) => ({
        name: b.name,
        commit: { sha: b.sha, url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/commits/${b.sha}` },
        protected: isBranchProtected(repo, b.name),
      })),
    );
  });

  const protectionBody = (repo: Repo, branch: string) => {
    const p = repo.protections.get(branch)!;
    const url = `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/branches/${encodeURIComponent(branch)}/protection`;
    const body: Record<string, unknown> = {
      url,
      required_status_checks: {
        url: `${url}/required_status_checks`,
        strict: p.strict,
        contexts: [...p.requiredChecks],
        contexts_url: `${url}/required_status_checks/contexts`,
        checks: p.requiredChecks.map((context) => ({ context, app_id: null })),
      },
      enforce_admins: { url: `${url}/enforce_admins`, enabled: p.enforceAdmins },
      required_linear_history: { enabled: false },
      allow_force_pushes: { enabled: false },
      allow_deletions: { enabled: false },
      required_conversation_resolution: { enabled: false },
      lock_branch: { enabled: false },
      allow_fork_syncing: { enabled: false },
      required_signatures: { url: `${url}/required_signatures`, enabled: false },
    };
    if (p.requiredApprovals > 0) {
      body.required_pull_request_reviews = {
        url: `${url}/required_pull_request_reviews`,
        dismiss_stale_reviews: p.dismissStaleReviews === true,
        require_code_owner_reviews: false,
        required_approving_review_count: p.requiredApprovals,
        require_last_push_approval: false,
      };
    }
    return body;
  };

  // `GET /repos/{o}/{r}/rules/branches/{branch}`: routes-rulesets.ts.

  r.add("GET", "/repos/:owner/:repo/branches/:branch/protection", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "administration", "read", "admin");
    if (!repo.protections.has(ctx.params.branch!)) throw new ApiError(404, "Branch not protected");
    return { body: protectionBody(repo, ctx.params.branch!) };
  });

  r.add("PUT", "/repos/:owner/:repo/branches/:branch/protection", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "administration", "write", "admin");
    const branch = ctx.params.branch!;
    if (!(await repo.git.readRef(`refs/heads/${branch}`))) throw new ApiError(404, "Branch not found");
    for (const field of [
      "required_status_checks",
      "enforce_admins",
      "required_pull_request_reviews",
      "restrictions",
    ]) {
      if (!(field in ctx.body))
        throw validationFailed("Invalid request.\n\n" + `"${field}" wasn't supplied.`);
    }
    const checks = ctx.body.required_status_checks as {
      strict?: boolean;
      contexts?: string[];
      checks?: { context: string }[];
    } | null;
    const reviews = ctx.body.required_pull_request_reviews as {
      required_approving_review_count?: number;
      dismiss_stale_reviews?: boolean;
    } | null;
    const contexts = [...(checks?.contexts ?? []), ...(checks?.checks ?? []).map((x) => x.context)];
    repos.protectBranch(emu, repo.owner, repo.name, branch, {
      requiredChecks: [...new Set(contexts)],
      strict: checks?.strict ?? false,
      requiredApprovals: reviews ? (reviews.required_approving_review_count ?? 1) : 0,
      enforceAdmins: ctx.body.enforce_admins === true,
      dismissStaleReviews: reviews?.dismiss_stale_reviews === true,
    });
    return { body: protectionBody(repo, branch) };
  });

  r.add("DELETE", "/repos/:owner/:repo/branches/:branch/protection", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "administration", "write", "admin");
    if (!repo.protections.delete(ctx.params.branch!)) throw new ApiError(404, "Branch not protected");
    return { status: 204 };
  });

  r.add("GET", "/repos/:owner/:repo/branches/*branch", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const branch = ctx.params.branch!;
    const sha = await repo.git.readRef(`refs/heads/${branch}`);
    if (!sha) throw new ApiError(404, "Branch not found");
    const url = `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/branches/${encodeURIComponent(branch)}`;
    const p = repo.protections.get(branch);
    return {
      body: {
        name: branch,
        commit: shape.commit(c(), repo, await repo.git.readCommit(sha), emu.loginForEmail),
        _links: { html: `${emu.webUrl}/${repo.owner}/${repo.name}/tree/${branch}`, self: url },
        protected: isBranchProtected(repo, branch),
        protection: {
          enabled: p !== undefined,
          required_status_checks: {
            enforcement_level: p && p.requiredChecks.length ? "non_admins" : "off",
            contexts: p ? [...p.requiredChecks] : [],
            checks: (p?.requiredChecks ?? []).map((context) => ({ context, app_id: null })),
          },
        },
        protection_url: `${url}/protection`,
      },
    };
  });

  // ------------------------------------------------------------------ commits and compare

  r.add("GET", "/repos/:owner/:repo/commits", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const head = await resolveOr404(repo, ctx.query.get("sha") ?? repo.defaultBranch);
    const path = ctx.query.get("path") ?? undefined;
    const shas = await repo.git.log(head, path ? { path } : {});
    const page = paginate(ctx, shas);
    const commits = [];
    for (const sha of page.body as string[])
      commits.push(shape.commit(c(), repo, await repo.git.readCommit(sha), emu.loginForEmail));
    return { body: commits, headers: page.headers };
  });

  r.add("GET", "/repos/:owner/:repo/commits/:ref", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const sha = await resolveOr404(repo, ctx.params.ref!);
    const commit = await repo.git.readCommit(sha);
    const files = await changedFileShapes(
      repo,
      commit.parents[0] ?? (await repo.git.writeTree(undefined, [])),
      sha,
    );
    return { body: shape.commit(c(), repo, commit, emu.loginForEmail, files) };
  });

  const changedFileShapes = async (repo: Repo, from: string, to: string) => {
    const files = await repo.git.changedFiles(from, to);
    const shapes = [];
    for (const f of files)
      shapes.push(shape.diffEntry(c(), repo, to, f, await repo.git.patch(from, to, f.path)));
    return shapes;
  };

  r.add("GET", "/repos/:owner/:repo/compare/*basehead", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "read", "read");
    const spec = ctx.params.basehead!;
    const split = spec.includes("...") ? spec.split("...") : spec.split("..");
    if (split.length !== 2) throw notFound();
    const strip = (s: string) => (s.includes(":") ? s.slice(s.indexOf(":") + 1) : s);
    const base = await repo.git.resolveCommit(strip(split[0]!));
    const head = await repo.git.resolveCommit(strip(split[1]!));
    if (!base || !head) throw notFound();
    const mergeBase = await repo.git.mergeBase(base, head);
    if (!mergeBase) throw notFound();
    const ahead = await repo.git.commitsBetween(base, head);
    const behind = await repo.git.commitsBetween(head, base);
    const status =
      ahead.length === 0 && behind.length === 0
        ? "identical"
        : behind.length === 0
          ? "ahead"
          : ahead.length === 0
            ? "behind"
            : "diverged";
    const page = paginate(ctx, ahead);
    const commits = [];
    for (const sha of page.body as string[])
      commits.push(shape.commit(c(), repo, await repo.git.readCommit(sha), emu.loginForEmail));
    const html = `${emu.webUrl}/${repo.owner}/${repo.name}/compare/${spec}`;
    return {
      headers: page.headers,
      body: {
        url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/compare/${spec}`,
        html_url: html,
        permalink_url: `${emu.webUrl}/${repo.owner}/${repo.name}/compare/${base.slice(0, 7)}...${head.slice(0, 7)}`,
        diff_url: `${html}.diff`,
        patch_url: `${html}.patch`,
        base_commit: shape.commit(c(), repo, await repo.git.readCommit(base), emu.loginForEmail),
        merge_base_commit: shape.commit(c(), repo, await repo.git.readCommit(mergeBase), emu.loginForEmail),
        status,
        ahead_by: ahead.length,
        behind_by: behind.length,
        total_commits: ahead.length,
        commits,
        files: await changedFileShapes(repo, mergeBase, head),
      },
    };
  });
}
