import { Client } from "@temporalio/client";
import { NativeConnection, Worker } from "@temporalio/worker";
import { floorSerialChildren } from "./floor-workflows.js";

// The floor one ordering key is measured against (bench/delivery/ordered-backlog with one
// key): N child workflows run one after the other by one parent, each doing nothing, on a
// given Temporal server. A key whose sequencer started each event as a workflow could go
// no faster than this.

/** Children per second of floorSerialChildren(n) on the server at `address`. */
export async function serialChildrenPerSecond(address: string, n: number): Promise<number> {
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `serial-floor-${Date.now()}`;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: new URL("./floor-workflows.js", import.meta.url).pathname,
  });
  const running = worker.run();
  try {
    const client = new Client({ connection });
    const started = Date.now();
    await client.workflow.execute(floorSerialChildren, {
      taskQueue,
      workflowId: `${taskQueue}-parent`,
      args: [n],
    });
    return n / ((Date.now() - started) / 1000);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
}
