import { expect } from "chai";
import { messageGroupId } from "../../activities/destinations/sqs.js";
import { messageKey } from "../../activities/send-destination.js";
import { endpointFor, readDestination } from "../../api/destination-input.js";
import { EgressPolicy } from "../../core/egress-policy.js";
import type { Config } from "../../generated/prisma/client.js";

// What a destination is stored as (defaults filled in, ports explicit), the endpoint derived
// from it, and which ordering key a message carries: no service needed.

describe("destinations: stored shape, derived endpoint, message key", () => {
  const egress = new EgressPolicy({ denyPrivate: false, allow: [], deny: [] });

  it("fills in defaults and explicit ports, and derives the endpoint", () => {
    const nats = readDestination({ type: "nats", servers: ["nats://10.0.0.5"], subject: "a.b" }, egress);
    expect(nats.destination).to.deep.equal({
      type: "nats",
      servers: ["nats://10.0.0.5:4222"],
      subject: "a.b",
      jetstream: true,
    });
    expect(endpointFor(nats.destination, undefined, egress)).to.equal("nats://10.0.0.5:4222/a.b");
    const amqp = readDestination(
      { type: "amqp", url: "amqps://app@mq.internal/prod", routingKey: "q", password: "p" },
      egress,
    );
    expect(amqp.destination).to.deep.equal({
      type: "amqp",
      url: "amqps://app@mq.internal:5671/prod",
      exchange: "",
      routingKey: "q",
    });
    expect(amqp.given).to.deep.equal({ password: "p" });
    expect(endpointFor(amqp.destination, undefined, egress)).to.equal(
      "amqps://mq.internal:5671/prod?exchange=&routingKey=q",
    );
    const kafka = readDestination(
      { type: "kafka", brokers: ["k1:9092", "k2:9092"], topic: "orders" },
      egress,
    );
    expect(endpointFor(kafka.destination, "kafka://k1:9092/orders", egress)).to.equal(
      "kafka://k1:9092/orders",
    );
    expect(() => endpointFor(kafka.destination, "kafka://k2:9092/orders", egress)).to.throw(/^endpoint: /);
  });

  it("stores an SQS queue URL as given, its region from an AWS host (else us-east-1), and its key apart", () => {
    const aws = readDestination(
      {
        type: "sqs",
        queueUrl: "https://SQS.eu-west-1.amazonaws.com:443/123456789012/orders.fifo",
        accessKeyId: "AKIDEXAMPLE",
        secretAccessKey: "s3cret",
      },
      egress,
    );
    expect(aws.destination).to.deep.equal({
      type: "sqs",
      queueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
      region: "eu-west-1",
    });
    expect(aws.given).to.deep.equal({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "s3cret" });
    expect(endpointFor(aws.destination, undefined, egress)).to.equal(
      "sqs+https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
    );
    const local = readDestination(
      { type: "sqs", queueUrl: "http://127.0.0.1:9324/000000000000/orders", region: "eu-north-1" },
      egress,
    );
    expect(local.destination).to.deep.equal({
      type: "sqs",
      queueUrl: "http://127.0.0.1:9324/000000000000/orders",
      region: "eu-north-1",
    });
    expect(
      readDestination({ type: "sqs", queueUrl: "http://mq.internal/acct/q" }, egress).destination,
    ).to.deep.equal({ type: "sqs", queueUrl: "http://mq.internal/acct/q", region: "us-east-1" });
    expect(() => readDestination({ type: "sqs", queueUrl: "https://h/acct/q.fifo.fifo" }, egress)).to.throw(
      /^destination\.queueUrl must end with/,
    );
  });

  it("makes a FIFO group id of any ordering key: the key when SQS takes it, else a hash of it", () => {
    expect(messageGroupId("acct-7")).to.equal("acct-7");
    expect(messageGroupId("a/b:c")).to.equal("a/b:c");
    for (const key of ["x".repeat(129), "compte ü", "h:looks-hashed", "tab\tkey"]) {
      const id = messageGroupId(key);
      expect(id, key).to.match(/^h:[A-Za-z0-9_-]{43}$/);
      expect(messageGroupId(key), key).to.equal(id);
    }
    expect(messageGroupId("compte ü")).to.not.equal(messageGroupId("compte u"));
  });

  it("keys a message by its events' ordering key, the config id for an ordered config's keyless events", () => {
    const config = (ordering: unknown) => ({ id: "c-1", ordering }) as unknown as Config;
    const ev = (key?: string) =>
      JSON.stringify({ type: "t", ...(key ? { ordering_key: key } : {}), payload: {} });
    expect(messageKey(config(null), [ev("acct-1")])).to.equal("acct-1");
    expect(messageKey(config(null), [ev()])).to.equal(undefined);
    expect(messageKey(config({ enabled: true }), [ev()])).to.equal("c-1");
    expect(messageKey(config({ enabled: true }), [ev("k"), ev("k")])).to.equal("k");
    expect(messageKey(config(null), [ev("a"), ev("b")])).to.equal(undefined);
    // A payload field of that name is not the event's key.
    expect(
      messageKey(config(null), [JSON.stringify({ type: "t", payload: { ordering_key: "x" } })]),
    ).to.equal(undefined);
  });
});
