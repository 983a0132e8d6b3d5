// Every workflow the workers register (this file is the bundle's entry).

export { collectBatches, deliverBatch } from "./batch-delivery.js";
export { deliverWebhook } from "./delivery.js";
export { keySequencer } from "./key-sequencer.js";
export { attemptsRetention } from "./maintenance.js";
export { orderedDelivery } from "./ordered-delivery.js";
export { recoverDeliveries } from "./recovery.js";
