/** The sandbox story (docs/architecture.md "The sandbox"): `runSandboxStory` and how its timeline prints. */
export { runSandboxStory, type SandboxStory, type SandboxStoryOptions } from "./run-sandbox-story.js";
export * from "./timeline.js";
