/**
 * Tag lists from the peers' documentation and tests, with the tag the peer chooses from each
 * (the same lists test/core/policy/select-tag.test.ts checks Ferry's own policies against).
 */
export interface PeerTagCase {
  tags: string[];
  chosen: string;
}

export const PEER_TAG_CASES = {
  /** Flux imagepolicies.md "Filter Tags": pattern '.*-rc.*', range '^1.x-0'. */
  fluxReleaseCandidates: {
    tags: ["1.0.0", "1.1.0-rc.1", "1.2.0-rc.2", "1.2.0", "2.0.0-rc.1", "1.3.0-beta.1"],
    chosen: "1.2.0-rc.2",
  },
  /** Flux imagepolicies.md "Example": range 5.1.x. */
  fluxPatchRange: { tags: ["5.0.3", "5.1.2", "5.1.4", "5.2.0", "6.0.0"], chosen: "5.1.4" },
  /** Flux imagepolicies.md "Filter Tags": the minio RELEASE.<timestamp> example, alphabetical asc. */
  fluxMinioTimestamps: {
    tags: [
      "RELEASE.2023-01-31T02-24-19Z",
      "RELEASE.2023-02-09T05-16-53Z",
      "latest",
      "RELEASE.2022-12-12T19-27-27Z",
    ],
    chosen: "RELEASE.2023-02-09T05-16-53Z",
  },
  /** Flux filter_test.go: pattern ver(\d+), extract $1, numerical. */
  fluxNumberedGroup: { tags: ["ver1", "ver2", "ver3", "rel1", "ver10"], chosen: "ver10" },
  /** Flux imagepolicies.md "Numerical": asc chooses the highest value. */
  fluxNumericalAsc: { tags: ["9", "10", "100", "11"], chosen: "100" },
  /** Flux API: numerical desc chooses the lowest. */
  fluxNumericalDesc: { tags: ["9", "10", "100", "11"], chosen: "9" },
  /** Flux API: alphabetical desc chooses the first in byte order. */
  fluxAlphabeticalDesc: { tags: ["b", "Z", "a"], chosen: "Z" },
  /** Argo CD Image Updater update-strategies.md: some/image:1.2.x. */
  argoPatchBranch: { tags: ["1.2.5", "1.2.12", "1.3.0", "1.15.2", "2.0.0"], chosen: "1.2.12" },
  /** Argo CD Image Updater update-strategies.md: some/image:1.x. */
  argoMajorBranch: { tags: ["1.2.5", "1.2.12", "1.3.0", "1.15.2", "2.0.0"], chosen: "1.15.2" },
  /** Argo CD Image Updater update-strategies.md: some/image:2.x-0 admits the 2.x prereleases. */
  argoPrereleases: {
    tags: ["1.9.0", "2.0.0-rc1", "2.0.0", "2.1.0-rc.1", "3.0.0-rc.1"],
    chosen: "2.1.0-rc.1",
  },
  /** Argo CD Image Updater update-strategies.md: alphabetical with regexp:^[0-9]{4}-[0-9]{2}-[0-9]{2}$. */
  argoCalver: { tags: ["2024-01-31", "2024-02-01", "2023-12-31", "latest"], chosen: "2024-02-01" },
  /**
   * Argo CD Image Updater update-strategies.md: newest-build over f33bacd, dev and latest, built
   * together: latest without allow-tags, f33bacd with regexp:^[0-9a-f]{7}$.
   */
  argoSameBuild: { tags: ["f33bacd", "dev", "latest"], chosen: "latest" },
  argoSameBuildShaOnly: { tags: ["f33bacd", "dev", "latest"], chosen: "f33bacd" },
} satisfies Record<string, PeerTagCase>;
