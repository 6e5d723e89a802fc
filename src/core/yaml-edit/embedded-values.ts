import type { Scalar } from "yaml";
import { UserError } from "../errors.js";
import type { Site } from "../targets/index.js";
import { walkDocument, type ParsedYaml } from "../yaml/yaml-tree.js";
import type { EditPlan } from "./plan-edits.js";

/** The file's strings that hold YAML the plan edits (`helm.values: |`), each with its parse. */
export function embeddedHosts(plan: EditPlan): Map<Scalar, NonNullable<Site["embedded"]>> {
  const hosts = new Map<Scalar, NonNullable<Site["embedded"]>>();
  for (const { embedded } of [...plan.sets.flatMap((set) => set.sites), ...plan.inserts])
    if (embedded) hosts.set(embedded.host, embedded);
  return hosts;
}

/**
 * A values string that is anchored may be aliased only as another source's `helm.values`:
 * anywhere else, editing it would change that too.
 */
export function refuseAliasedValuesStrings(parsed: ParsedYaml, plan: EditPlan): void {
  for (const [host, { document }] of embeddedHosts(plan)) {
    walkDocument(document, (visit) => {
      const { path } = visit;
      if (!visit.throughAlias || visit.node !== host) return;
      if (path[path.length - 1] === "values" && path[path.length - 2] === "helm") return;
      const { line } = parsed.lineCounter.linePos(host.range?.[0] ?? 0);
      throw new UserError(
        "shared-anchor",
        `the helm.values string on line ${line} is anchored and its alias at ${path.join(".")} is not a source's values; ` +
          "editing it would change that too — give it its own value",
      );
    });
  }
}
