// Both readers on every case of one release (the differential test's core; the benchmark
// times the same cases).
import { lineOf } from "../../../skbuild-settings/index.js";
import { buildCases } from "./cases.js";
import { type Comparison, compare, readWithOurs } from "./compare.js";
import { readWithUpstream } from "./upstream.js";

/** Runs both readers on every case for one release. */
export async function differential(release: string): Promise<Comparison[]> {
  // The cases depend on the driver's facts (Python version, platform), so ask for them first.
  const probe = await readWithUpstream(release, []);
  const cases = buildCases(probe.facts, release);
  const { facts, answers } = await readWithUpstream(
    release,
    cases.map((c) => ({ id: c.id, toml: c.toml, ...c.context })),
  );
  const line = lineOf(release);
  return cases.map((c, i) => compare(c, readWithOurs(c, facts, release), answers[i]!, line));
}
