/** Manifests the contract suite commits to its config repos. */

export function namespaceYaml(name: string): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
}

export function serviceYaml(name: string, options: { clusterIP?: string } = {}): string {
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
${options.clusterIP ? `  clusterIP: ${options.clusterIP}\n` : ""}  selector: {app: ${name}}
  ports:
    - port: 80
      targetPort: 8080
`;
}

/** A Deployment that reads a password from a Secret (kustomize rewrites the generated name). */
export function deploymentWithSecretYaml(name: string, secret: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 2
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: ${name}
          image: ghcr.io/acme/shop:1.8.0
          ports:
            - containerPort: 8080
          env:
            - name: PASSWORD
              valueFrom:
                secretKeyRef: {name: ${secret}, key: password}
`;
}

export function crdYaml(group: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer, default: 1}
                colour: {type: string}
`;
}

export function widgetYaml(group: string, name: string, colour: string): string {
  return `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec:\n  colour: ${colour}\n`;
}

export function clusterRoleYaml(name: string): string {
  return `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${name}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get]
`;
}
