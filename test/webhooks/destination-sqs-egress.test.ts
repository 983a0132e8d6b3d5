import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { BrokerConnections } from "../../activities/destinations/connections.js";
import { createLogger } from "../../common/logger.js";
import type { SqsDestination } from "../../core/destinations.js";
import { EgressPolicy } from "../../core/egress-policy.js";

// The egress policy on an SQS destination's sends, with no SQS server: a queue URL whose
// host is a denied literal, or a name that resolves only to denied addresses, is a
// permanent failure naming the policy, and nothing reaches the address. (Loopback stands for
// the denied range: no test sends a packet off this machine.)

describe("destinations: SQS under the egress policy", () => {
  const denyLoopback = new EgressPolicy({
    denyPrivate: false,
    allow: [],
    deny: ["127.0.0.0/8", "::1/128"],
  });
  let server: Server;
  let port = 0;
  let requests = 0;
  let brokers: BrokerConnections;

  before(async () => {
    server = createServer((_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    brokers = new BrokerConnections(denyLoopback, createLogger("sqs-egress-test", "warn"));
  });
  after(async () => {
    await brokers.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (configId: string, queueUrl: string) =>
    brokers.send(
      {
        configId,
        destination: { type: "sqs", queueUrl, region: "us-east-1" } satisfies SqsDestination,
        secret: { accessKeyId: "id", secretAccessKey: "secret" },
      },
      { id: `wh-${configId}`, body: "{}", headers: { "svc-webhook-id": `wh-${configId}` }, timeoutMs: 5000 },
    );

  it("fails an address literal the policy denies at once, permanently, sending nothing", async () => {
    const result = await send("literal", `http://127.0.0.1:${port}/000000000000/orders`);
    expect(result.statusCode).to.equal(0);
    expect(result.permanent).to.equal(true);
    expect(result.error).to.match(/^egress policy: 127\.0\.0\.1 is in --egress-deny 127\.0\.0\.0\/8/);
    expect(requests).to.equal(0);
  });

  it("fails a name that resolves only to denied addresses when it connects, permanently, sending nothing", async () => {
    const result = await send("name", `http://localhost:${port}/000000000000/orders`);
    expect(result.statusCode).to.equal(0);
    expect(result.permanent, result.error).to.equal(true);
    expect(result.error).to.match(/egress policy: localhost resolves only to denied addresses/);
    expect(requests).to.equal(0);
  });
});
