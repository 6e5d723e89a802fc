/**
 * Where the reconciler may write, decided by Ferry itself whatever RBAC would allow: namespaced
 * objects only in its `--namespace` and the `--allow-namespace` ones, cluster-scoped objects only
 * of the `--allow-cluster-kind` kinds (and the Namespace `--create-namespace` asks for). A refused
 * object is neither applied nor pruned. Pure.
 */
import { plaintextSecretField, SECRET_ALTERNATIVES } from "../core/check/plaintext-secrets.js";
import { describeRef } from "./object-ref.js";
import type { ObjectRef } from "./types.js";

export interface Confinement {
  /** The reconciler's own namespace (`--namespace`). */
  namespace: string;
  /** More namespaces (`--allow-namespace`); `*` allows every namespace. */
  allowNamespaces: readonly string[];
  /** Cluster-scoped kinds (`--allow-cluster-kind`), as `Kind` or `Kind.group`; `*` allows every kind. */
  allowClusterKinds: readonly string[];
  /** `--create-namespace`: the Namespace named `namespace` is Ferry's to create. */
  createNamespace: boolean;
  /** `--allow-plaintext-secrets`: apply a Secret whose `data`/`stringData` sits in Git in the clear. */
  allowPlaintextSecrets?: boolean;
}

export interface RefusedObject {
  ref: ObjectRef;
  reason: string;
}

/** Why `ref` is outside the confinement, or undefined when Ferry may apply (and prune) it. */
export function refusalReason(ref: ObjectRef, confinement: Confinement): string | undefined {
  if (ref.namespace !== "") {
    if (ref.namespace === confinement.namespace) return undefined;
    if (confinement.allowNamespaces.some((allowed) => allowed === "*" || allowed === ref.namespace))
      return undefined;
    return `namespace ${ref.namespace} is outside --namespace ${confinement.namespace} (allow it with --allow-namespace ${ref.namespace})`;
  }
  if (
    confinement.createNamespace &&
    ref.group === "" &&
    ref.kind === "Namespace" &&
    ref.name === confinement.namespace
  )
    return undefined;
  const qualified = ref.group === "" ? ref.kind : `${ref.kind}.${ref.group}`;
  if (
    confinement.allowClusterKinds.some(
      (allowed) => allowed === "*" || allowed === ref.kind || allowed === qualified,
    )
  )
    return undefined;
  return `cluster-scoped kind ${qualified} is not allowed (allow it with --allow-cluster-kind ${ref.kind})`;
}

/** Splits desired objects into those Ferry may apply and those it refuses. */
export function confine<T extends { ref: ObjectRef; object?: unknown; decrypted?: true }>(
  objects: T[],
  confinement: Confinement | undefined,
): { allowed: T[]; refused: RefusedObject[] } {
  if (!confinement) return { allowed: objects, refused: [] };
  const allowed: T[] = [];
  const refused: RefusedObject[] = [];
  for (const object of objects) {
    const reason =
      refusalReason(object.ref, confinement) ??
      (object.decrypted ? undefined : plaintextSecretRefusal(object.object, confinement));
    if (reason) refused.push({ ref: object.ref, reason });
    else allowed.push(object);
  }
  return { allowed, refused };
}

/**
 * A Secret in the clear in Git is refused unless `--allow-plaintext-secrets` says otherwise
 * (docs/security.md); one made only of SOPS-decrypted values (`decrypted`) is not checked here.
 */
function plaintextSecretRefusal(object: unknown, confinement: Confinement): string | undefined {
  if (confinement.allowPlaintextSecrets === true) return undefined;
  const field = plaintextSecretField(object);
  if (field === undefined) return undefined;
  return `a plaintext Secret (${field}) from Git is not applied: ${SECRET_ALTERNATIVES} (or allow it with --allow-plaintext-secrets)`;
}

export function describeRefusal({ ref, reason }: RefusedObject): string {
  return `refused: ${describeRef(ref)}: ${reason}`;
}
