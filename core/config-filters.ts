import type { Config } from "../generated/prisma/client.js";
import type { EventMessage } from "./event-message.js";
import { EventBudget, FilterBudgetExceeded } from "./filter-budget.js";
import { compileFilter, type EventPredicate } from "./filter-compile.js";
import { eventsFiltered } from "./metrics.js";
import { PermanentStartFailure } from "./start-failures.js";

// Applying configs' payload filters to an event. A filter is compiled once per
// config version, not per event: compiled predicates are kept by config id with
// the updatedAt they were compiled from, which every write of a config moves
// (the API stamps it, a trigger does for any other writer).

/** Compiled configs kept at most (the oldest compiled goes first). */
const MAX_COMPILED = 50_000;

const compiled = new Map<string, { version: number; test: EventPredicate }>();

function predicateOf(config: Config): EventPredicate {
  const version = config.updatedAt.getTime();
  const hit = compiled.get(config.id);
  if (hit?.version === version) return hit.test;
  const test = compileFilter(config.filter, true);
  compiled.delete(config.id);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(config.id, { version, test });
  return test;
}

export interface FilteredConfigs {
  /** Configs without a filter, and those whose filter the event passed. */
  passed: Config[];
  /** How many filters the event did not pass (those over budget included). */
  filteredOut: number;
  /** Configs whose filter was stopped by the step budget (filter-budget.ts): counted as not passed. */
  overBudget: { config: Config; reason: string }[];
  /** Configs whose filter could not be compiled or run (a row written around the API), with why. */
  broken: { config: Config; failure: PermanentStartFailure }[];
}

/**
 * Splits the configs an event's type matched by their filters. Each filter is
 * tried on its own: one that throws is reported for its config and never keeps
 * the event from the others. The filter sees the message endpoints receive.
 * Each filter gets a step budget, within one for the whole event: a filter that
 * would go over it, and every filter after the event's budget is spent, counts
 * as not passed, with the reason.
 */
export function applyFilters(
  configs: Config[],
  event: EventMessage,
  budget = new EventBudget(),
): FilteredConfigs {
  const result: FilteredConfigs = { passed: [], filteredOut: 0, overBudget: [], broken: [] };
  let unmatched = 0;
  for (const config of configs) {
    if (config.filter === null) {
      result.passed.push(config);
      continue;
    }
    const meter = budget.next();
    if (meter === null) {
      result.overBudget.push({
        config,
        reason: "the event's filter budget was spent by its other configs' filters",
      });
      continue;
    }
    let passes: boolean;
    try {
      passes = predicateOf(config)(event, meter);
    } catch (err) {
      if (err instanceof FilterBudgetExceeded) {
        result.overBudget.push({ config, reason: err.message });
        continue;
      }
      const failure = new PermanentStartFailure(
        `config ${config.id} cannot be used: its filter fails: ${(err as Error).message}`,
        "config",
      );
      result.broken.push({ config, failure });
      continue;
    } finally {
      budget.spend(meter);
    }
    if (passes) result.passed.push(config);
    else unmatched++;
  }
  result.filteredOut = unmatched + result.overBudget.length;
  if (unmatched > 0) eventsFiltered.inc({ reason: "filter" }, unmatched);
  if (result.overBudget.length > 0) eventsFiltered.inc({ reason: "budget" }, result.overBudget.length);
  return result;
}
