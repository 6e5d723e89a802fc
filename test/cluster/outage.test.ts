import { inject, vi } from "vitest";
import { describeOutageContract } from "./contract/outage-suite.js";
import { realBackend } from "./contract/real-backend.js";

// A real API server and etcd on a shared 2-core machine, plus git and kubectl per test.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

describeOutageContract("kube-apiserver", async () => realBackend(inject("controlPlane")));
