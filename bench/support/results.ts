import { mkdirSync, writeFileSync } from "node:fs";
import { fromRoot } from "../../common/paths.js";

/** Writes a bench's results to bench/results/<name>.json, dated, and says where. */
export function writeResults(name: string, results: Record<string, unknown>): void {
  mkdirSync(fromRoot("bench", "results"), { recursive: true });
  const file = fromRoot("bench", "results", `${name}.json`);
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), ...results }, null, 2)}\n`);
  console.log(`\nresults written to ${file}`);
}
