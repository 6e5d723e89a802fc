import { inject, vi } from "vitest";
import { describeConnectionContract } from "./contract/connections-suite.js";
import { realBackend } from "./contract/real-backend.js";

// A real API server and etcd on a shared 2-core machine, plus git and kubectl per test.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

describeConnectionContract("kube-apiserver", async () => realBackend(inject("controlPlane")));
