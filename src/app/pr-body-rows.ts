/**
 * The rows of a promotion pull request's body: each changed image's policy, in words, and the source compare
 * range between the revisions it moves from and to. Used wherever a promotion pull request is written.
 */
import { type FerryConfig } from "../core/config/schema.js";
import { environmentPolicy } from "../core/policy/layered-policy.js";
import type { BodyRow } from "../core/pr/body.js";
import type { AppDeps } from "./app-deps.js";
import type { EnvironmentPlan } from "./plan-environment.js";

/** Policy wording and source compare range for each changed image. */
export async function bodyRows(
  deps: Pick<AppDeps, "registryFor">,
  config: FerryConfig,
  environment: string,
  plan: EnvironmentPlan,
  policyText?: string,
): Promise<Record<string, BodyRow>> {
  const rows: Record<string, BodyRow> = {};
  for (const change of plan.changes) {
    const image = config.images[change.image];
    const policy = environmentPolicy(config, environment, change.image);
    const row: BodyRow = { image: change.image, policy: policyText ?? describePolicy(policy) };
    if (image?.source) {
      let from: string | undefined;
      const reference = change.from.digest ?? change.from.tag;
      if (reference)
        from = await deps
          .registryFor(config)
          .describe(change.repository, reference)
          .then(
            (d) => d.revision,
            () => undefined,
          );
      row.source = {
        repo: image.source,
        ...(from ? { from } : {}),
        ...(change.revision ? { to: change.revision } : {}),
      };
    }
    rows[change.image] = row;
  }
  return rows;
}

function describePolicy(policy: ReturnType<typeof environmentPolicy>): string {
  const parts: string[] = [policy.strategy];
  if (policy.range) parts.push(policy.range);
  if (policy.allow) parts.push(`allow ${policy.allow}`);
  if (policy.tag) parts.push(`tag ${policy.tag}`);
  if (policy.pin !== "tag") parts.push(`pin ${policy.pin}`);
  return parts.join(" ");
}
