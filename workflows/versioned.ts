import type { VersioningBehavior } from "@temporalio/common";
import { setWorkflowOptions } from "@temporalio/workflow";
import * as workflows from "./index.js";

// The bundle entry of versioned workers (--worker-deployment-name, workers/worker-versioning.ts):
// the workflows of index.ts, each with its versioning behaviour. Unversioned workers bundle
// index.ts itself, since the server refuses a behaviour from a worker that is not versioned
// (its workflow tasks would fail); the code is the same, so histories replay alike in both.

export * from "./index.js";

/**
 * Pinned: a run stays on the build it started on, through retries and continue-as-new, so
 * a new build needs no patch for it; short-lived, its old build drains soon.
 * AutoUpgrade: long-lived (a key's sequencer, a batch collector, a bulk recovery, a
 * retention run, the earlier ordered key workflow): the next workflow task runs on the
 * current build, which must replay its history (patches), and a new run after
 * continue-as-new starts there.
 */
export const VERSIONING_BEHAVIOURS = {
  deliverWebhook: "PINNED",
  deliverBatch: "PINNED",
  keySequencer: "AUTO_UPGRADE",
  collectBatches: "AUTO_UPGRADE",
  orderedDelivery: "AUTO_UPGRADE",
  recoverDeliveries: "AUTO_UPGRADE",
  attemptsRetention: "AUTO_UPGRADE",
} as const satisfies Record<keyof typeof workflows, VersioningBehavior>;

for (const [name, workflow] of Object.entries(workflows)) {
  const behaviour = VERSIONING_BEHAVIOURS[name as keyof typeof workflows];
  setWorkflowOptions({ versioningBehavior: behaviour }, workflow as (...args: never[]) => Promise<unknown>);
}
