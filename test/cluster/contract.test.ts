import { inject, vi } from "vitest";
import { describeWavesContract } from "./contract/waves-suite.js";
import { describeHealthContract } from "./contract/health-suite.js";
import { describeSourceDownContract } from "./contract/source-down-suite.js";
import { describeClusterContract } from "./contract/suite.js";
import { realBackend } from "./contract/real-backend.js";

// A real API server and etcd on a shared 2-core machine, plus git and kubectl per test.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

describeClusterContract("kube-apiserver", async () => realBackend(inject("controlPlane")), {
  authorization: true,
});

describeHealthContract("kube-apiserver", async () => realBackend(inject("controlPlane")));
describeSourceDownContract("kube-apiserver", async () => realBackend(inject("controlPlane")));
describeWavesContract("kube-apiserver", async () => realBackend(inject("controlPlane")));
