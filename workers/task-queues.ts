// Names of the task queues beside the one given by --task-queue, so that each kind of
// work can be scaled on its own by starting more worker processes on its queue.

/** HTTP send activities (deliveries started with --send-mode queue). */
export const sendQueue = (taskQueue: string) => `${taskQueue}-sends`;

/** Retention, reconciliation's repairs and bulk recoveries. */
export const maintenanceQueue = (taskQueue: string) => `${taskQueue}-maintenance`;
