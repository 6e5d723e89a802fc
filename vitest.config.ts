import { configDefaults, defineConfig } from "vitest/config";

// `npm test`: everything but the real-API-server tier (test/cluster/*.test.ts needs Go-built
// binaries; `npm run test:cluster` runs it with vitest.cluster.config.ts).
export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, "test/cluster/**"],
  },
});
