// Every workflow the delivery worker registers (this file is the bundle's entry).
export { deliverWebhook } from "./delivery.js";
