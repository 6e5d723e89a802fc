import { defineConfig } from "vitest/config";

// `npm run test:cluster`: the reconciler against kube-apiserver + etcd, one control plane per run.
export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["test/cluster/global-setup.ts"],
    // One file at a time: the control plane and the tests share two cores.
    fileParallelism: false,
  },
});
