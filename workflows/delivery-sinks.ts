// What a delivery workflow tells the process that runs it, outside its history (sinks are
// not recorded, so adding or removing one never breaks a replay): when a send starts and
// when its outcome is back. workers/deliveries-in-flight.ts counts deliveries with a send in
// flight from these, to pace new starts (--max-deliveries-in-flight).
import type { Sinks } from "@temporalio/workflow";

export interface DeliverySinks extends Sinks {
  deliveries: {
    sendStarted(): void;
    sendFinished(): void;
  };
}
