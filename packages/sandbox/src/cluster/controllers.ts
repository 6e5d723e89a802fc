/**
 * Simulated controllers, advanced one step every `rolloutStepMs`: Deployments roll out through a
 * ReplicaSet per pod-template hash and Pods (one more Pod becomes ready per step); a template
 * whose image `imageExists` rejects never becomes ready and the Deployment reports
 * Progressing=False/ProgressDeadlineExceeded once `progressDeadlineMs` has passed (Pods show
 * ImagePullBackOff). StatefulSets, DaemonSets (one simulated node), Jobs, standalone Pods and
 * PVCs get plausible status too.
 */
import { createHash } from "node:crypto";
import { ClusterState } from "./cluster-state.js";
import { deepClone, isPlainObject, metadataOf, type JsonObject } from "./patches.js";
import type { ResourceType } from "./resource-types.js";

export interface ControllerOptions {
  imageExists: (image: string) => Promise<boolean>;
  rolloutStepMs: number;
  progressDeadlineMs: number;
}

const MANAGER = "kube-controller-manager";
/** How long a "missing image" answer is trusted before asking again (the image may be pushed later). */
const NEGATIVE_IMAGE_TTL_MS = 500;

type ImageVerdict = { state: "pending" } | { state: "known"; exists: boolean; at: number };

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function containerImages(template: unknown): string[] {
  const spec = isPlainObject(template) && isPlainObject(template.spec) ? template.spec : {};
  const all = [
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
    ...(Array.isArray(spec.containers) ? spec.containers : []),
  ];
  return all.map((c: JsonObject) => String(c.image ?? ""));
}

interface Condition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
}

/** Keeps timestamps of conditions whose status and reason did not change, so status does not churn. */
function mergeConditions(previous: unknown, next: Condition[]): JsonObject[] {
  const before = Array.isArray(previous) ? (previous as JsonObject[]) : [];
  return next.map((condition) => {
    const old = before.find((c) => c.type === condition.type);
    if (
      old &&
      old.status === condition.status &&
      old.reason === condition.reason &&
      old.message === condition.message
    )
      return old;
    const now = timestamp();
    const transitioned = !old || old.status !== condition.status;
    return {
      ...condition,
      lastUpdateTime: now,
      lastTransitionTime: transitioned ? now : old.lastTransitionTime,
    };
  });
}

export class SimulatedControllers {
  private timer: NodeJS.Timeout | undefined;
  private readonly images = new Map<string, ImageVerdict>();
  /** When each ReplicaSet (by uid) started rolling out, for the progress deadline. */
  private readonly rolloutStarts = new Map<string, number>();
  /** The resource version at which a step last found nothing to do; unchanged since, no step is needed… */
  private settledAt: string | undefined;
  /** …unless something waits on time: an image lookup, a missing image, a progress deadline. */
  private waiting = false;

  constructor(
    private readonly state: ClusterState,
    private readonly options: ControllerOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.step(), this.options.rolloutStepMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private t(apiVersion: string, kind: string): ResourceType {
    return this.state.type(apiVersion, kind);
  }

  /** One reconcile pass over everything; errors from one object never stop the others. */
  step(): void {
    // Idle clusters cost nothing: skip the pass when nothing changed and nothing waits on time.
    if (this.settledAt === this.state.currentResourceVersion() && !this.waiting) return;
    this.waiting = false;
    const before = this.state.currentResourceVersion();
    this.pass();
    // A pass that wrote something may have unblocked the next one (a ReplicaSet's new status
    // feeds its Deployment), so only a pass without writes settles the cluster.
    const after = this.state.currentResourceVersion();
    this.settledAt = after === before ? after : undefined;
  }

  private pass(): void {
    const passes: [string, string, (object: JsonObject) => void][] = [
      ["apps/v1", "Deployment", (o) => this.deployment(o)],
      ["apps/v1", "ReplicaSet", (o) => this.replicaSet(o)],
      ["apps/v1", "StatefulSet", (o) => this.statefulSet(o)],
      ["apps/v1", "DaemonSet", (o) => this.daemonSet(o)],
      ["batch/v1", "Job", (o) => this.job(o)],
      ["v1", "Pod", (o) => this.standalonePod(o)],
      ["v1", "PersistentVolumeClaim", (o) => this.claim(o)],
    ];
    for (const [apiVersion, kind, reconcile] of passes) {
      for (const object of this.state.objectsOf(this.t(apiVersion, kind))) {
        try {
          reconcile(object);
        } catch {
          // The object changed or vanished under us (e.g. its namespace was deleted); next step retries.
        }
      }
    }
  }

  /** true/false once known; undefined while the registry is being asked. */
  private imagesExist(template: unknown): boolean | undefined {
    let answer: boolean | undefined = true;
    for (const image of containerImages(template)) {
      const verdict = this.images.get(image);
      const stale =
        verdict?.state === "known" && !verdict.exists && Date.now() - verdict.at > NEGATIVE_IMAGE_TTL_MS;
      if (!verdict || stale) {
        if (!verdict) this.images.set(image, { state: "pending" });
        this.options.imageExists(image).then(
          (exists) => this.images.set(image, { state: "known", exists, at: Date.now() }),
          () => this.images.set(image, { state: "known", exists: false, at: Date.now() }),
        );
      }
      const current = this.images.get(image)!;
      if (current.state === "pending") answer = answer === false ? false : undefined;
      else if (!current.exists) answer = false;
      // Missing images are asked about again (they may be pushed later), so keep stepping.
      if (current.state === "pending" || !current.exists) this.waiting = true;
    }
    return answer;
  }

  private ownedBy(owner: JsonObject, type: ResourceType): JsonObject[] {
    const uid = metadataOf(owner).uid;
    const namespace = metadataOf(owner).namespace;
    return this.state.objectsOf(type).filter((object) => {
      const metadata = metadataOf(object);
      const refs = metadata.ownerReferences;
      return (
        metadata.namespace === namespace &&
        Array.isArray(refs) &&
        refs.some((ref: JsonObject) => ref.uid === uid)
      );
    });
  }

  private ownerReference(owner: JsonObject): JsonObject {
    const metadata = metadataOf(owner);
    return {
      apiVersion: owner.apiVersion,
      kind: owner.kind,
      name: metadata.name,
      uid: metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
  }

  private deployment(deployment: JsonObject): void {
    const metadata = metadataOf(deployment);
    const namespace = metadata.namespace as string;
    const spec = deployment.spec as JsonObject;
    const desired = Number(spec.replicas ?? 1);
    const template = spec.template as JsonObject;
    const hash = podTemplateHash(template);
    const rsType = this.t("apps/v1", "ReplicaSet");
    const owned = this.ownedBy(deployment, rsType);
    let current = owned.find(
      (rs) => (metadataOf(rs).labels as JsonObject | undefined)?.["pod-template-hash"] === hash,
    );
    if (!current) {
      const labels = {
        ...((template.metadata as JsonObject | undefined)?.labels as object),
        "pod-template-hash": hash,
      };
      const selector = (spec.selector as JsonObject | undefined)?.matchLabels as object | undefined;
      current = this.state.create(
        rsType,
        namespace,
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          metadata: {
            name: `${metadata.name}-${hash}`,
            namespace,
            labels,
            ownerReferences: [this.ownerReference(deployment)],
          },
          spec: {
            replicas: desired,
            selector: { matchLabels: { ...selector, "pod-template-hash": hash } },
            template: { ...deepClone(template), metadata: { ...(template.metadata as object), labels } },
          },
        },
        { fieldManager: MANAGER },
      );
    }
    const currentUid = metadataOf(current).uid as string;
    if (!this.rolloutStarts.has(currentUid)) this.rolloutStarts.set(currentUid, Date.now());
    const imagesOk = this.imagesExist(template);
    const currentStatus = (current.status ?? {}) as JsonObject;
    const currentReady = Number(currentStatus.readyReplicas ?? 0);
    const old = owned.filter((rs) => metadataOf(rs).uid !== currentUid);
    // Old ReplicaSets keep serving until the new one is ready (maxUnavailable 0, in effect).
    const oldTarget = Math.max(0, desired - currentReady);
    let oldReplicas = 0;
    let oldReady = 0;
    for (const rs of old) {
      const rsReplicas = Number((rs.spec as JsonObject).replicas ?? 0);
      const target = Math.min(rsReplicas, Math.max(0, oldTarget - oldReplicas));
      if (target !== rsReplicas) this.setReplicas(rsType, rs, target);
      oldReplicas += target;
      oldReady += Math.min(target, Number((rs.status as JsonObject | undefined)?.readyReplicas ?? 0));
    }
    if (Number((current.spec as JsonObject).replicas) !== desired) this.setReplicas(rsType, current, desired);

    const ready = Math.min(currentReady, desired) + oldReady;
    const replicas = desired + oldReplicas;
    const complete = currentReady >= desired && oldReplicas === 0;
    const maxUnavailable = Math.floor(desired * 0.25);
    const elapsed = Date.now() - this.rolloutStarts.get(currentUid)!;
    const rsName = String(metadataOf(current).name);
    let progressing: Condition;
    if (complete) {
      progressing = {
        type: "Progressing",
        status: "True",
        reason: "NewReplicaSetAvailable",
        message: `ReplicaSet "${rsName}" has successfully progressed.`,
      };
    } else if (imagesOk === false && elapsed >= this.options.progressDeadlineMs) {
      progressing = {
        type: "Progressing",
        status: "False",
        reason: "ProgressDeadlineExceeded",
        message: `ReplicaSet "${rsName}" has timed out progressing.`,
      };
    } else {
      progressing = {
        type: "Progressing",
        status: "True",
        reason: "ReplicaSetUpdated",
        message: `ReplicaSet "${rsName}" is progressing.`,
      };
    }
    const available: Condition =
      ready >= desired - maxUnavailable
        ? {
            type: "Available",
            status: "True",
            reason: "MinimumReplicasAvailable",
            message: "Deployment has minimum availability.",
          }
        : {
            type: "Available",
            status: "False",
            reason: "MinimumReplicasUnavailable",
            message: "Deployment does not have minimum availability.",
          };
    const previous = (deployment.status ?? {}) as JsonObject;
    const status: JsonObject = {
      observedGeneration: metadata.generation,
      replicas,
      updatedReplicas: desired,
      readyReplicas: ready,
      availableReplicas: ready,
      ...(replicas - ready > 0 ? { unavailableReplicas: replicas - ready } : {}),
      conditions: mergeConditions(previous.conditions, [available, progressing]),
    };
    if (status.readyReplicas === 0) delete status.readyReplicas;
    if (status.availableReplicas === 0) delete status.availableReplicas;
    this.state.writeStatus(this.t("apps/v1", "Deployment"), namespace, metadata.name as string, status);
  }

  private setReplicas(type: ResourceType, object: JsonObject, replicas: number): void {
    const next = deepClone(object);
    (next.spec as JsonObject).replicas = replicas;
    const metadata = metadataOf(object);
    this.state.update(type, metadata.namespace as string, metadata.name as string, next, {
      fieldManager: MANAGER,
    });
  }

  /** Pods of a ReplicaSet: one more becomes ready per step when its images exist. */
  private replicaSet(rs: JsonObject): void {
    const metadata = metadataOf(rs);
    const namespace = metadata.namespace as string;
    const spec = rs.spec as JsonObject;
    const replicas = Number(spec.replicas ?? 0);
    const imagesOk = this.imagesExist(spec.template);
    const previousReady = Number((rs.status as JsonObject | undefined)?.readyReplicas ?? 0);
    const ready = imagesOk ? Math.min(replicas, previousReady + 1) : Math.min(previousReady, replicas);
    this.syncPods(rs, spec.template as JsonObject, replicas, ready, imagesOk);
    const status: JsonObject = {
      replicas,
      fullyLabeledReplicas: replicas,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: metadata.generation,
    };
    for (const key of ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"])
      if (status[key] === 0) delete status[key];
    this.state.writeStatus(this.t("apps/v1", "ReplicaSet"), namespace, metadata.name as string, status);
  }

  private syncPods(
    owner: JsonObject,
    template: JsonObject,
    replicas: number,
    ready: number,
    imagesOk: boolean | undefined,
  ): void {
    const podType = this.t("v1", "Pod");
    const metadata = metadataOf(owner);
    const namespace = metadata.namespace as string;
    const pods = this.ownedBy(owner, podType).sort((a, b) =>
      String(metadataOf(a).name).localeCompare(String(metadataOf(b).name)),
    );
    for (const extra of pods.slice(replicas))
      this.state.delete(podType, namespace, metadataOf(extra).name as string);
    // After a scale-down the Pods kept are not necessarily the first indexes, so a new Pod's
    // derived name may be taken: try the next seed until it is free (else create fails forever).
    const taken = new Set(pods.slice(0, replicas).map((pod) => String(metadataOf(pod).name)));
    let seed = 0;
    for (let index = 0; index < replicas; index++) {
      let pod = pods[index];
      if (!pod) {
        let suffix: string;
        do {
          suffix = createHash("sha256")
            .update(`${String(metadata.uid)}/${seed++}`)
            .digest("hex")
            .slice(0, 5);
        } while (taken.has(`${String(metadata.name)}-${suffix}`));
        taken.add(`${String(metadata.name)}-${suffix}`);
        pod = this.state.create(
          podType,
          namespace,
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              name: `${String(metadata.name)}-${suffix}`,
              namespace,
              labels: (template.metadata as JsonObject | undefined)?.labels ?? {},
              ownerReferences: [this.ownerReference(owner)],
            },
            spec: deepClone(template.spec),
          },
          { fieldManager: MANAGER },
        );
      }
      this.state.writeStatus(
        podType,
        namespace,
        metadataOf(pod).name as string,
        podStatus(template, index < ready, imagesOk, pod.status),
      );
    }
  }

  private statefulSet(sts: JsonObject): void {
    const metadata = metadataOf(sts);
    const spec = sts.spec as JsonObject;
    const replicas = Number(spec.replicas ?? 1);
    const revision = `${String(metadata.name)}-${podTemplateHash(spec.template)}`;
    const previous = (sts.status ?? {}) as JsonObject;
    const restarted = previous.updateRevision !== revision;
    const ready = this.imagesExist(spec.template)
      ? Math.min(replicas, (restarted ? 0 : Number(previous.readyReplicas ?? 0)) + 1)
      : Math.min(replicas, restarted ? 0 : Number(previous.readyReplicas ?? 0));
    const done = ready === replicas;
    this.state.writeStatus(
      this.t("apps/v1", "StatefulSet"),
      metadata.namespace as string,
      metadata.name as string,
      {
        observedGeneration: metadata.generation,
        replicas,
        readyReplicas: ready,
        currentReplicas: done ? replicas : ready,
        updatedReplicas: ready,
        availableReplicas: ready,
        currentRevision: done ? revision : (previous.currentRevision ?? revision),
        updateRevision: revision,
        collisionCount: 0,
      },
    );
  }

  private daemonSet(ds: JsonObject): void {
    const metadata = metadataOf(ds);
    const ok = this.imagesExist((ds.spec as JsonObject).template) === true;
    this.state.writeStatus(
      this.t("apps/v1", "DaemonSet"),
      metadata.namespace as string,
      metadata.name as string,
      {
        observedGeneration: metadata.generation,
        desiredNumberScheduled: 1,
        currentNumberScheduled: 1,
        updatedNumberScheduled: 1,
        numberMisscheduled: 0,
        numberReady: ok ? 1 : 0,
        numberAvailable: ok ? 1 : 0,
        ...(ok ? {} : { numberUnavailable: 1 }),
      },
    );
  }

  private job(job: JsonObject): void {
    const metadata = metadataOf(job);
    const spec = job.spec as JsonObject;
    const previous = (job.status ?? {}) as JsonObject;
    if (previous.completionTime) return;
    const startTime = (previous.startTime as string | undefined) ?? timestamp();
    const ok = this.imagesExist(spec.template);
    const type = this.t("batch/v1", "Job");
    if (ok === true && previous.startTime) {
      const now = timestamp();
      this.state.writeStatus(type, metadata.namespace as string, metadata.name as string, {
        startTime,
        completionTime: now,
        succeeded: Number(spec.completions ?? 1),
        ready: 0,
        conditions: [
          {
            type: "SuccessCriteriaMet",
            status: "True",
            reason: "CompletionsReached",
            message: "Reached expected number of succeeded pods",
            lastProbeTime: now,
            lastTransitionTime: now,
          },
          {
            type: "Complete",
            status: "True",
            reason: "CompletionsReached",
            message: "Reached expected number of succeeded pods",
            lastProbeTime: now,
            lastTransitionTime: now,
          },
        ],
      });
    } else {
      this.state.writeStatus(type, metadata.namespace as string, metadata.name as string, {
        startTime,
        active: 1,
        ready: 0,
      });
    }
  }

  private standalonePod(pod: JsonObject): void {
    const metadata = metadataOf(pod);
    if (Array.isArray(metadata.ownerReferences) && metadata.ownerReferences.length > 0) return;
    const ok = this.imagesExist(pod);
    this.state.writeStatus(
      this.t("v1", "Pod"),
      metadata.namespace as string,
      metadata.name as string,
      podStatus(pod, ok === true, ok, pod.status),
    );
  }

  private claim(pvc: JsonObject): void {
    const metadata = metadataOf(pvc);
    const spec = (pvc.spec ?? {}) as JsonObject;
    const requests = ((spec.resources as JsonObject | undefined)?.requests ?? {}) as JsonObject;
    this.state.writeStatus(
      this.t("v1", "PersistentVolumeClaim"),
      metadata.namespace as string,
      metadata.name as string,
      {
        phase: "Bound",
        accessModes: spec.accessModes ?? ["ReadWriteOnce"],
        capacity: { storage: requests.storage ?? "1Gi" },
      },
    );
  }
}

function podStatus(
  template: JsonObject,
  ready: boolean,
  imagesOk: boolean | undefined,
  previous: unknown,
): JsonObject {
  const spec = (template.spec ?? {}) as JsonObject;
  const containers = (Array.isArray(spec.containers) ? spec.containers : []) as JsonObject[];
  const before = (isPlainObject(previous) ? previous : {}) as JsonObject;
  const startTime = (before.startTime as string | undefined) ?? timestamp();
  const containerStatuses = containers.map((c) => ({
    name: c.name,
    image: c.image,
    ready,
    restartCount: 0,
    started: ready,
    state: ready
      ? { running: { startedAt: startTime } }
      : imagesOk === false
        ? { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${String(c.image)}"` } }
        : { waiting: { reason: "ContainerCreating" } },
  }));
  const status = ready ? "True" : "False";
  return {
    phase: ready ? "Running" : "Pending",
    startTime,
    podIP: "10.244.0.10",
    conditions: [
      { type: "Initialized", status: "True" },
      { type: "Ready", status },
      { type: "ContainersReady", status },
      { type: "PodScheduled", status: "True" },
    ],
    containerStatuses,
  };
}

/** The `pod-template-hash` the Deployment controller labels ReplicaSets and Pods with. */
export function podTemplateHash(template: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(template ?? {}))
    .digest("hex")
    .slice(0, 10)
    .replace(/[a-f]/g, (c) => "bcdfg"[c.charCodeAt(0) - 97] ?? c);
}
