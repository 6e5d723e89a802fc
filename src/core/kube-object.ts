/**
 * The shape every layer shares for a Kubernetes object (the reconciler, the diff core): plain JSON.
 */

/** A Kubernetes object as JSON: what a manifest renders to and what the API server returns. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}
