/**
 * Reports the reconciler's state to GitHub as Deployments on the config commit: one Deployment
 * per applied revision and environment (found before created: an upsert), and a new status only
 * when the state or the count of manual changes undone in the last 24 h changes — also across restarts, since the latest status is read back first.
 */
import { Octokit } from "@octokit/rest";
import { driftCountIn } from "../../core/deployment-status.js";
import { authenticateWith, staticToken, type TokenSource } from "../../reconciler/github-app-tokens.js";
import type { DeploymentReport, DeploymentReporter } from "../../reconciler/ports.js";

export interface GitHubDeploymentReporterOptions {
  /** `owner/repo` of the config repo. */
  repository: string;
  environment: string;
  /** A static token, or installation tokens minted from App credentials (github-app-tokens.ts). */
  token: string | TokenSource;
  /** `https://api.github.com` or an emulator / GHES base URL. */
  baseUrl?: string;
  /** Names the reconciler in the Deployment's payload, so several clusters can share an environment name. */
  instance: string;
  userAgent?: string;
}

export class GitHubDeploymentReporter implements DeploymentReporter {
  private readonly octokit: Octokit;
  private readonly owner: string;
  private readonly repo: string;
  /** deployment id by revision, and the last state posted to each. */
  private readonly deployments = new Map<string, number>();
  private readonly lastPosted = new Map<number, string>();

  constructor(private readonly options: GitHubDeploymentReporterOptions) {
    const [owner, repo, extra] = options.repository.split("/");
    if (!owner || !repo || extra !== undefined)
      throw new Error(`--github-repo must be owner/repo, got ${JSON.stringify(options.repository)}`);
    this.owner = owner;
    this.repo = repo;
    this.octokit = new Octokit({
      ...(options.baseUrl ? { baseUrl: options.baseUrl.replace(/\/+$/, "") } : {}),
      userAgent: options.userAgent ?? "ferry-reconciler",
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    authenticateWith(
      this.octokit,
      typeof options.token === "string" ? staticToken(options.token) : options.token,
    );
  }

  async report(report: DeploymentReport): Promise<void> {
    const id = await this.deploymentFor(report);
    const key = `${report.state}\n${report.description}`;
    if (!this.lastPosted.has(id)) {
      const { data } = await this.octokit.rest.repos.listDeploymentStatuses({
        owner: this.owner,
        repo: this.repo,
        deployment_id: id,
        per_page: 1,
      });
      const latest = data[0];
      if (latest) this.lastPosted.set(id, `${latest.state}\n${latest.description ?? ""}`);
    }
    // Only the state and the 24 h drift count count as a change; a new description alone (e.g. a
    // rollout counter) is not worth a status. A manual change undone within one cycle leaves the
    // state at success, and the count is how GitHub (and the app's dashboard) learns of it.
    const [lastState, ...lastDescription] = this.lastPosted.get(id)?.split("\n") ?? [];
    if (
      lastState === report.state &&
      (driftCountIn(lastDescription.join("\n")) ?? 0) === (driftCountIn(report.description) ?? 0)
    )
      return;
    await this.octokit.rest.repos.createDeploymentStatus({
      owner: this.owner,
      repo: this.repo,
      deployment_id: id,
      state: report.state,
      description: report.description,
      environment: this.options.environment,
      auto_inactive: report.state === "success",
    });
    this.lastPosted.set(id, key);
  }

  private async deploymentFor(report: DeploymentReport): Promise<number> {
    const known = this.deployments.get(report.revision);
    if (known !== undefined) return known;
    const { owner, repo } = this;
    const { environment } = this.options;
    const { data: existing } = await this.octokit.rest.repos.listDeployments({
      owner,
      repo,
      sha: report.revision,
      environment,
      per_page: 100,
    });
    const mine = existing.find(
      (deployment) => deployment.sha === report.revision && deployment.environment === environment,
    );
    let id = mine?.id;
    if (id === undefined) {
      const created = await this.octokit.rest.repos.createDeployment({
        owner,
        repo,
        ref: report.revision,
        environment,
        auto_merge: false,
        required_contexts: [],
        description: `Ferry reconciler ${this.options.instance}`,
        payload: { ferry: { instance: this.options.instance } },
        transient_environment: false,
      });
      if (created.status !== 201 || !("id" in created.data)) {
        throw new Error(`GitHub did not create the deployment (HTTP ${created.status})`);
      }
      id = created.data.id;
    }
    this.deployments.set(report.revision, id);
    return id;
  }
}
