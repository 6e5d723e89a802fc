/**
 * Tag selection over 100,000 generated tags, for every strategy (run by test/bench/run.ts).
 * Each figure is the median of several runs in milliseconds, with a fresh policy object each run
 * so that compiling the policy (regex, globs, range) is part of the figure.
 */
import { performance } from "node:perf_hooks";
import semver from "semver";
import { parseTagList } from "../../src/cli/select.js";
import { parsePolicy } from "../../src/core/policy/parse-policy.js";
import { rankTags, selectTag, type TagCandidate } from "../../src/core/policy/select-tag.js";
import type { PolicyInput } from "../../src/core/policy/schema.js";
import { compileGlob } from "../../src/core/patterns/glob.js";
import { compileAllow } from "../../src/core/policy/tag-pattern.js";
import { sized } from "./size.js";

const COUNT = 100_000;
const RUNS = sized(7, 1);
const NOW = new Date("2024-06-01T12:00:00Z");
const DIGEST = `sha256:${"c".repeat(64)}`;

/** A small deterministic generator (mulberry32): the same tags on every run and machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(make: (next: () => number, index: number) => TagCandidate): TagCandidate[] {
  const next = random(COUNT);
  return Array.from({ length: COUNT }, (_, index) => make(next, index));
}

const int = (next: () => number, below: number) => Math.floor(next() * below);
const hex = (next: () => number, length: number) =>
  Array.from({ length }, () => "0123456789abcdef"[int(next, 16)]).join("");

/** Mostly versions (some v-prefixed, prereleases, builds), with the noise real repositories hold. */
const semverTags = generate((next, index) => {
  const roll = next();
  if (roll < 0.05) return { tag: hex(next, 7) };
  if (roll < 0.08) return { tag: `pr-${index}` };
  const pre = next() < 0.1 ? `-rc.${int(next, 5)}` : "";
  const build = next() < 0.05 ? `_b${int(next, 100)}` : "";
  return {
    tag: `${next() < 0.3 ? "v" : ""}${int(next, 6)}.${int(next, 40)}.${int(next, 200)}${pre}${build}`,
  };
});
const numericalTags = generate((next) => ({ tag: String(int(next, 2 ** 40)) }));
const buildTags = generate((next, index) => ({
  tag: `main-${hex(next, 7)}-${1_700_000_000 + index * 7 + int(next, 5)}`,
}));
const calverTags = generate((next) => ({
  tag: `${2015 + int(next, 10)}-${String(1 + int(next, 12)).padStart(2, "0")}-${String(1 + int(next, 28)).padStart(2, "0")}`,
}));
const createdTags = generate((next) => ({
  tag: hex(next, 7) + hex(next, 5),
  created: new Date(NOW.getTime() - int(next, 365 * 86_400_000)),
  digest: DIGEST,
  platforms: next() < 0.8 ? ["linux/amd64", "linux/arm64/v8"] : ["linux/amd64"],
}));
const semverWithMetadata = semverTags.map((candidate, index) => ({
  ...candidate,
  created: new Date(NOW.getTime() - (index % 1000) * 3_600_000),
  platforms: index % 5 === 0 ? ["linux/amd64"] : ["linux/amd64", "linux/arm64"],
  digest: DIGEST,
}));
const digestTags = [...createdTags, { tag: "latest", digest: DIGEST }];

/**
 * The ReDoS report's pattern: nested quantifiers and a bounded repeat. One 42-character near miss
 * took 11.6 s in V8's backtracking engine; RE2 is linear. 10,000 near misses of 42–200 characters
 * (OCI tags stop at 128, so selection sees those up to 128; the raw match sees them all).
 */
const REDOS_PATTERN = "^main-([a-z0-9]+-?)+-[0-9a-f]{7,40}$";
const redosNearMisses = Array.from(
  { length: 10_000 },
  (_, index) => `main-${"a".repeat(37 + (index % 159))}`,
);
/** The pattern under a new source text each run (`(?:)` matches nothing), so no run reuses a compiled, warmed-up engine. */
let redosRun = 0;
const coldRedosPattern = () => `${REDOS_PATTERN}${"(?:)".repeat(++redosRun)}`;
const redosTags: TagCandidate[] = [
  ...redosNearMisses.filter((tag) => tag.length <= 128).map((tag) => ({ tag })),
  { tag: "main-feature-x-1a2b3c4" },
];

/**
 * The security report's `ignore` glob: on minimatch's backtracking RegExp, O(n^8) on a run of
 * `a`s (27 s at 56 characters, hours at 128). Selection over 1,000 tags of 128 `a`s each, and the
 * raw match of one 4,096-character text (longer than any tag: the engine's cost per character).
 */
const IGNORE_ATTACK = "*a*a*a*a*a*a*a*a*b";
const attackTags: TagCandidate[] = [
  ...Array.from({ length: 1_000 }, (_, index) => ({
    tag: `${"a".repeat(124)}${String(index).padStart(4, "0")}`,
  })),
  { tag: "1.0.0" },
];
let attackRun = 0;
/** The glob under a new source text each run (`*` after `*` matches the same), so no run reuses a compiled engine. */
const coldAttackGlob = () => `${"*".repeat(++attackRun)}${IGNORE_ATTACK}`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(work: () => unknown): number {
  const samples: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const result = work();
    samples.push(performance.now() - started);
    // Keep the result alive so the engine cannot skip the work.
    if (result === undefined) throw new Error("bench produced no result");
  }
  return median(samples);
}

/**
 * `ferry select` over a million-line tag list (the list parsed as the CLI parses it, then chosen)
 * against the floor a person would write: `semver.maxSatisfying` over the same lines in a bare
 * script. Same text, same range, alternating pairs in one run; the ratio is Ferry's time over the peer's.
 */
const MILLION = sized(1_000_000, 50_000);
const millionText = (() => {
  const next = random(MILLION);
  const lines: string[] = [];
  for (let index = 0; index < MILLION; index++) {
    const pre = next() < 0.1 ? `-rc.${int(next, 5)}` : "";
    lines.push(`${int(next, 6)}.${int(next, 40)}.${int(next, 200)}${pre}`);
  }
  return `${lines.join("\n")}\n`;
})();

function millionTagsFigures(): Record<string, number> {
  const ferry: number[] = [];
  const peer: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let started = performance.now();
    const selection = selectTag(parseTagList(millionText, "bench"), {
      policy: parsePolicy({ range: "^3.0.0" }),
      now: NOW,
    });
    ferry.push(performance.now() - started);
    started = performance.now();
    const best = semver.maxSatisfying(millionText.split("\n").filter(Boolean), "^3.0.0");
    peer.push(performance.now() - started);
    if (selection.kind !== "selected" || selection.tag !== best)
      throw new Error(`select and semver.maxSatisfying disagree: ${JSON.stringify(selection)} vs ${best}`);
  }
  const size = MILLION >= 1_000_000 ? "1m" : `${MILLION / 1000}k`;
  return {
    [`select.cli_path.${size}_tags.ms`]: median(ferry),
    [`select.semver_max_satisfying.${size}_tags.ms`]: median(peer),
    [`select.cli_path_vs_semver_max_satisfying.${size}_tags.ratio`]: median(ferry) / median(peer),
  };
}

function selectFigure(input: PolicyInput, candidates: TagCandidate[], current?: string): number {
  return time(() => {
    const options: Parameters<typeof selectTag>[1] = { policy: parsePolicy(input), now: NOW };
    if (current !== undefined) options.current = current;
    const selection = selectTag(candidates, options);
    if (selection.kind !== "selected")
      throw new Error(`bench policy ${JSON.stringify(input)} chose nothing: ${selection.reason}`);
    return selection;
  });
}

export async function bench(): Promise<Record<string, number>> {
  const semverNames = semverTags.map((candidate) => candidate.tag);
  const tagListText = createdTags
    .map((candidate) => `${candidate.tag} ${candidate.created!.toISOString()}`)
    .join("\n");
  return {
    "select.semver.100k_tags.ms": selectFigure({ range: "^3.0.0" }, semverTags),
    "select.semver_prerelease_current.100k_tags.ms": selectFigure(
      { range: ">=1.0.0", prerelease: true },
      semverTags,
      "2.0.0",
    ),
    "select.semver_ignore_globs.100k_tags.ms": selectFigure(
      { range: "*", ignore: ["*-rc.*", "v0.*", "pr-*"] },
      semverTags,
    ),
    "select.semver_minage_platforms_pin.100k_tags.ms": selectFigure(
      { range: "^4.0.0", minAge: "2h", platforms: ["linux/arm64"], pin: "digest" },
      semverWithMetadata,
    ),
    "select.numerical.100k_tags.ms": selectFigure({ strategy: "numerical" }, numericalTags),
    "select.numerical_extract.100k_tags.ms": selectFigure(
      { strategy: "numerical", allow: "^main-[a-f0-9]+-(?P<ts>[0-9]+)$", extract: "$ts" },
      buildTags,
    ),
    "select.alphabetical.100k_tags.ms": selectFigure(
      { strategy: "alphabetical", allow: "^\\d{4}-\\d{2}-\\d{2}$" },
      calverTags,
    ),
    "select.newest_build.100k_tags.ms": selectFigure(
      { strategy: "newest-build", platforms: ["linux/arm64"] },
      createdTags,
    ),
    "select.digest.100k_tags.ms": selectFigure({ strategy: "digest", tag: "latest" }, digestTags),
    "select.redos_pattern.10k_near_miss_tags.ms": time(() => {
      const policy = parsePolicy({ strategy: "alphabetical", allow: coldRedosPattern() });
      const selection = selectTag(redosTags, { policy, now: NOW });
      if (selection.kind !== "selected") throw new Error(`redos bench chose nothing: ${selection.reason}`);
      return selection;
    }),
    "match.redos_pattern.10k_tags_42_to_200_chars.ms": time(() => {
      const pattern = compileAllow(coldRedosPattern());
      const matched = redosNearMisses.filter((tag) => pattern.test(tag)).length;
      if (matched !== 0) throw new Error(`near misses matched: ${matched}`);
      return matched;
    }),
    "select.ignore_attack_glob.1k_tags_128_chars.ms": time(() => {
      const policy = parsePolicy({ range: "*", ignore: [coldAttackGlob()] });
      const selection = selectTag(attackTags, { policy, now: NOW });
      if (selection.kind !== "selected") throw new Error(`ignore bench chose nothing: ${selection.reason}`);
      return selection;
    }),
    "match.ignore_attack_glob.one_128_char_tag.ms": time(() => {
      const glob = compileGlob(coldAttackGlob());
      return glob.test("a".repeat(128)) ? undefined : false;
    }),
    "match.ignore_attack_glob.one_4096_char_text.ms": time(() => {
      const glob = compileGlob(coldAttackGlob());
      return glob.test("a".repeat(4096)) ? undefined : false;
    }),
    "rank.semver.100k_tags.ms": time(() => rankTags(semverNames, parsePolicy({ range: "*" }))),
    "cli.parse_tag_list.100k_lines.ms": time(() => parseTagList(tagListText, "bench")),
    ...millionTagsFigures(),
  };
}
