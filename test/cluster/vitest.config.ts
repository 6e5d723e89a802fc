import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// `npm run test:cluster`: the reconciler against kube-apiserver + etcd, one control plane per run.
// The tier's own config, kept with its tests; paths below are from the repository's root.
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["test/cluster/global-setup.ts"],
    // One file at a time: the control plane and the tests share two cores.
    fileParallelism: false,
  },
});
