/**
 * The watches that let a reconciler heal drift between intervals: one per kind and namespace of
 * the objects it applied, selected by its instance label, kept in step with each cycle's objects.
 */
import type { CycleResult } from "./cycle-result.js";
import { inventoryKey } from "./object-ref.js";
import type { ClusterPort } from "./ports.js";

type Watch = NonNullable<ClusterPort["watch"]>;

export class WatchSet {
  private readonly watches = new Map<string, () => void>();

  constructor(
    private readonly watch: Watch,
    private readonly instance: string,
    private readonly onChange: () => void,
    private readonly log: (message: string, fields: Record<string, unknown>) => void,
    private readonly onReconnect: () => void = () => {},
  ) {}

  /** Starts watches for kinds newly applied and stops those no longer needed. */
  async update(result: CycleResult, running: () => boolean): Promise<void> {
    const wanted = new Map<string, { apiVersion: string; kind: string; namespace: string | undefined }>();
    const refused = new Set((result.plan?.refused ?? []).map(({ ref }) => inventoryKey(ref)));
    for (const { ref } of result.objects) {
      if (refused.has(inventoryKey(ref))) continue; // never watched outside the confinement
      const apiVersion = ref.group ? `${ref.group}/${ref.version}` : ref.version;
      wanted.set(`${apiVersion} ${ref.kind} ${ref.namespace}`, {
        apiVersion,
        kind: ref.kind,
        namespace: ref.namespace || undefined,
      });
    }
    for (const [key, stop] of this.watches) {
      if (!wanted.has(key)) {
        stop();
        this.watches.delete(key);
      }
    }
    for (const [key, { apiVersion, kind, namespace }] of wanted) {
      if (this.watches.has(key) || !running()) continue;
      try {
        this.watches.set(
          key,
          await this.watch(
            apiVersion,
            kind,
            namespace,
            `ferry.dev/instance=${this.instance}`,
            this.onChange,
            this.onReconnect,
          ),
        );
      } catch (error) {
        this.log("watch failed", {
          instance: this.instance,
          kind,
          namespace,
          error: (error as Error).message,
        });
      }
    }
  }

  stopAll(): void {
    for (const stopWatch of this.watches.values()) stopWatch();
    this.watches.clear();
  }
}
