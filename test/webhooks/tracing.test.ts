import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { OtlpCollector, type ReceivedSpan } from "../ratelimit/otlp-collector.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { runCommand } from "../support/process.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks } from "../support/webhooks-server.js";

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * --tracing against the real stack and an OTLP collector written for the tests: one trace
 * from the consumed message through the delivery workflow and its activity to the POST,
 * whose `traceparent` the receiver gets.
 */
describe("delivery traces (--tracing, exported over OTLP)", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let collector: OtlpCollector;
  let receiver: Receiver;

  before(async () => {
    collector = await OtlpCollector.start();
    await env.start(["--tracing", "--tracing-service-name", "webhooks-under-test"], undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.httpEndpoint,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
    await collector?.close();
  });

  const received = (key: string) => receiver.requests.find((r) => r.body.includes(key));
  const spansOf = async (traceId: string, names: string[]) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const spans = collector.spans.filter((s) => s.traceId === traceId);
      const found = names.map((n) => spans.find((s) => s.name === n));
      if (found.every(Boolean)) return found as ReceivedSpan[];
      if (Date.now() > deadline)
        throw new Error(`spans of ${traceId}: ${JSON.stringify(spans.map((s) => s.name))}, wanted ${names}`);
      await sleep(100);
    }
  };

  it("joins the event's trace: consume, start, workflow, activity and POST, with traceparent at the receiver", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["trace.happened"] });
    const traceId = hex(16);
    const callerSpan = hex(8);
    const event = env.event({
      app: "trace",
      type: "happened",
      traceparent: `00-${traceId}-${callerSpan}-01`,
    });
    await env.publish(event);
    await env.result(config.id, event.idempotency_key);
    const request = received(event.idempotency_key)!;
    // The body is the event as always: the trace context travels in the header only.
    expect(JSON.parse(request.body)).to.not.have.property("traceparent");
    const header = String(request.headers.traceparent);
    expect(header).to.match(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const [consume, start, run, activity, post] = await spansOf(traceId, [
      `consume ${env.topic}`,
      "StartWorkflow:deliverWebhook",
      "RunWorkflow:deliverWebhook",
      // The default send mode's first send: a local activity of the workflow worker.
      "RunActivity:sendFirstLocally",
      "POST",
    ]);
    expect(consume!.parentSpanId).to.equal(callerSpan);
    expect(consume!.attributes).to.include({
      "webhooks.event_type": "trace.happened",
      "webhooks.idempotency_key": event.idempotency_key,
    });
    expect(start!.parentSpanId).to.equal(consume!.spanId);
    expect(run!.parentSpanId).to.equal(start!.spanId);
    expect(activity!.parentSpanId).to.not.equal("");
    expect(post!.parentSpanId).to.equal(activity!.spanId);
    expect(post!.attributes).to.include({ "http.response.status_code": 200 });
    expect(header.split("-")[2]).to.equal(post!.spanId);
    expect(post!.resource).to.include({ "service.name": "webhooks-under-test" });
  });

  it("TRACING_ENABLED turns it on and off as the rate limit service reads it (false means off)", async () => {
    for (const [value, on] of [
      ["false", false],
      ["0", false],
      ["true", true],
    ] as const) {
      const api = await startWebhooks({
        env: { TRACING_ENABLED: value, OTEL_EXPORTER_OTLP_ENDPOINT: collector.httpEndpoint },
      });
      try {
        expect(api.process.output.includes("tracing enabled"), `TRACING_ENABLED=${value}`).to.equal(on);
      } finally {
        await api.stop();
      }
    }
    const bad = await runCommand("webhooks", ["serve", "--tracing", "maybe"]);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.include("--tracing").and.to.include("expected true or false");
  });

  it("starts a trace for an event without one; POST /events takes the caller's traceparent", async () => {
    const config = await env.createConfig({ endpoint: receiver.url, eventTypes: ["trace.plain"] });
    const plain = env.event({ app: "trace", type: "plain" });
    await env.publish(plain);
    await env.result(config.id, plain.idempotency_key);
    const header = String(received(plain.idempotency_key)!.headers.traceparent);
    const traceId = header.split("-")[1]!;
    const [consume] = await spansOf(traceId, [`consume ${env.topic}`, "POST"]);
    expect(consume!.parentSpanId).to.equal("");

    const callerTrace = hex(16);
    const caller = hex(8);
    const viaHttp = env.event({ app: "trace", type: "plain" });
    const r = await env.api.call("POST", "/events", viaHttp, {
      traceparent: `00-${callerTrace}-${caller}-01`,
    });
    expect(r.status, r.text).to.equal(202);
    await env.result(config.id, viaHttp.idempotency_key);
    expect(String(received(viaHttp.idempotency_key)!.headers.traceparent)).to.match(
      new RegExp(`^00-${callerTrace}-`),
    );
    const [ingest] = await spansOf(callerTrace, ["POST /events", "RunWorkflow:deliverWebhook", "POST"]);
    expect(ingest!.parentSpanId).to.equal(caller);
  });
});
