import type { WorkerOptions } from "@temporalio/worker";
import type { WebhooksOptions } from "../core/options.js";
import { type BundleEntry, workflowBuildId } from "./workflow-bundle.js";

// Worker Versioning (docs/webhooks/changing-the-workflow.md#worker-versioning): with
// --worker-deployment-name, every worker of the process polls as one version of that Worker
// Deployment (the name and a build id), and the server routes each workflow by its
// behaviour (workflows/versioned.ts): a delivery stays on the version it started on, a
// long-lived workflow follows the current version. Without it the workers are unversioned,
// as they always were.

/** What the server refuses in a deployment name or build id (its own checks, said before starting). */
export function versionPartProblem(kind: "deployment name" | "build id", value: string): string | undefined {
  if (!value.trim()) return `the ${kind} is empty`;
  if (/\s/.test(value)) return `a ${kind} has no spaces, got "${value}"`;
  if (value.startsWith("__")) return `a ${kind} may not start with "__" (Temporal's own), got "${value}"`;
  if (kind === "deployment name" && /[.:]/.test(value))
    return `a deployment name has no "." or ":" (they separate it from the build id), got "${value}"`;
  return undefined;
}

/** What a process's workers poll as: a version, and the bundle entry with the behaviours. */
export interface WorkerVersioning {
  /** Given to every worker of the process (Worker.create's workerDeploymentOptions). */
  deploymentOptions: NonNullable<WorkerOptions["workerDeploymentOptions"]>;
  entry: BundleEntry;
}

/**
 * The process's versioning, or undefined (unversioned) without --worker-deployment-name. The
 * build id, unless given, is this build's bundle hash (workflowBuildId).
 */
export async function workerVersioning(
  options: Pick<WebhooksOptions, "workerDeployment">,
): Promise<WorkerVersioning | undefined> {
  const deployment = options.workerDeployment;
  if (!deployment) return undefined;
  return {
    deploymentOptions: {
      version: { deploymentName: deployment.name, buildId: deployment.buildId ?? (await workflowBuildId()) },
      useWorkerVersioning: true,
      // Every workflow names its own (workflows/versioned.ts); one that did not would follow
      // the current version, as every workflow did before versioning.
      defaultVersioningBehavior: "AUTO_UPGRADE",
    },
    entry: "versioned",
  };
}
