/**
 * The contract suite's real backend: kube-apiserver + etcd started once per run by
 * `test/cluster/global-setup.ts`. Admission refusals are a ValidatingAdmissionPolicy (built in
 * since Kubernetes 1.30: no webhook server), ServiceAccount tokens come from the TokenRequest API.
 */
import { randomBytes } from "node:crypto";
import { apiRequest, kubeconfigFor, serviceAccountToken, type ControlPlaneInfo } from "../control-plane.js";
import { eventually, type AdmissionRejection, type ClusterBackend } from "./backend.js";

const ADMISSION = "/apis/admissionregistration.k8s.io/v1";

async function must(response: Promise<{ status: number; body: string }>, what: string): Promise<void> {
  const { status, body } = await response;
  if (status >= 300) throw new Error(`${what}: HTTP ${status} ${body}`);
}

export function realBackend(info: ControlPlaneInfo): ClusterBackend {
  return {
    name: "kube-apiserver",
    kubeconfig: () => kubeconfigFor(info),
    async rejectWrites(rejection: AdmissionRejection) {
      const name = `ferry-test-${randomBytes(3).toString("hex")}`;
      const cel = (text: string) => `'${text.replaceAll("'", "\\'")}'`;
      await must(
        apiRequest(info, "POST", `${ADMISSION}/validatingadmissionpolicies`, {
          body: {
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingAdmissionPolicy",
            metadata: { name },
            spec: {
              failurePolicy: "Fail",
              matchConstraints: {
                resourceRules: [
                  {
                    apiGroups: [rejection.group],
                    apiVersions: [rejection.version],
                    operations: ["CREATE", "UPDATE"],
                    resources: [rejection.resource],
                  },
                ],
              },
              validations: [
                {
                  expression: `!(object.metadata.namespace == ${cel(rejection.namespace)} && object.metadata.name == ${cel(rejection.name)})`,
                  message: rejection.message,
                  reason: "Invalid",
                },
              ],
            },
          },
        }),
        "create ValidatingAdmissionPolicy",
      );
      await must(
        apiRequest(info, "POST", `${ADMISSION}/validatingadmissionpolicybindings`, {
          body: {
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingAdmissionPolicyBinding",
            metadata: { name },
            spec: { policyName: name, validationActions: ["Deny"] },
          },
        }),
        "create ValidatingAdmissionPolicyBinding",
      );
      // Policies take effect asynchronously: probe with a dry-run create until it is refused.
      const base = rejection.group
        ? `/apis/${rejection.group}/${rejection.version}`
        : `/api/${rejection.version}`;
      await eventually(
        () =>
          apiRequest(
            info,
            "POST",
            `${base}/namespaces/${rejection.namespace}/${rejection.resource}?dryRun=All`,
            {
              body: { metadata: { name: rejection.name, namespace: rejection.namespace } },
            },
          ),
        (response) => response.status === 422,
        30_000,
        "the admission policy to take effect",
      );
      return async () => {
        await must(
          apiRequest(info, "DELETE", `${ADMISSION}/validatingadmissionpolicybindings/${name}`),
          "delete binding",
        );
        await must(
          apiRequest(info, "DELETE", `${ADMISSION}/validatingadmissionpolicies/${name}`),
          "delete policy",
        );
      };
    },
    async serviceAccountKubeconfig(namespace, name) {
      return kubeconfigFor(info, { token: await serviceAccountToken(info, namespace, name) });
    },
    async close() {
      // The control plane belongs to the run (global setup), not to one test file.
    },
  };
}
