import { Client, Connection } from "@temporalio/client";
import { NativeConnection } from "@temporalio/worker";
import { expect } from "chai";
import { describeFailure, permanentFailureOf } from "../../core/start-failures.js";
import { WebhookEventType } from "../../workflows/search-attributes.js";
import { freePort } from "../support/ports.js";
import { testTemporal } from "../support/temporal.js";

/** How real failures of a workflow start are told apart: never again as it is, or maybe later. */
describe("start failures from the Temporal dev server (core/start-failures.ts)", function () {
  this.timeout(60_000);

  const start = (client: Client, options: Partial<Parameters<Client["workflow"]["start"]>[1]>) =>
    client.workflow.start("deliverWebhook", {
      taskQueue: `start-failures-${Date.now()}`,
      workflowId: `start-failures-${Date.now()}-${Math.random()}`,
      ...options,
    });

  for (const kind of ["plain", "native (eager start)"] as const) {
    it(`calls a refused search attribute and an unconvertible input permanent through a ${kind} connection`, async () => {
      const { address } = await testTemporal();
      const connection =
        kind === "plain"
          ? await Connection.connect({ address })
          : await NativeConnection.connect({ address });
      const client = new Client({ connection });
      try {
        const tooLong = await start(client, {
          typedSearchAttributes: [{ key: WebhookEventType, value: "t".repeat(3000) }],
        }).catch((e) => e);
        expect(permanentFailureOf(tooLong)?.message).to.equal(
          "Temporal refused the start: search attribute WebhookEventType value size 3002 exceeds size limit 2048",
        );
        let deep: unknown = 1;
        for (let i = 0; i < 10_000; i++) deep = { a: deep };
        const unconvertible = await start(client, { args: [deep] }).catch((e) => e);
        expect(permanentFailureOf(unconvertible)?.message).to.match(
          /^Temporal's payload converter rejected the input: Unable to convert/,
        );
        expect(permanentFailureOf(unconvertible)?.source).to.equal("start");
      } finally {
        await connection.close();
      }
    });
  }

  it("calls a start against an unreachable server a failure that may pass", async () => {
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}`, connectTimeout: 500 });
    const client = new Client({ connection });
    try {
      const err = await start(client, {}).catch((e) => e);
      expect(err).to.be.instanceOf(Error);
      expect(permanentFailureOf(err)).to.equal(undefined);
      expect(describeFailure(err)).to.match(/UNAVAILABLE/);
    } finally {
      await connection.close();
    }
  });
});
