import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";

/** The `batch` config field: checked (400 naming the field), stored, shown only when set. */
describe("batched delivery", function () {
  this.timeout(180_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    await env.start();
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const config = (over: Record<string, unknown>) => ({
    endpoint: receiver.url,
    eventTypes: ["ledger.batched"],
    ...over,
  });
  const refused = async (method: string, path: string, body: unknown, field: string) => {
    const r = await env.api.call(method, path, body);
    expect(r.status, r.text).to.equal(400);
    expect(r.body.errorMessage).to.include(field);
  };

  it("refuses a bad batch field with a 400 naming it, and stores nothing", async () => {
    const before = (await env.api.call("GET", "/configs")).body.cursor.data.length;
    for (const [batch, field] of [
      [{ maxEvents: 1, maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: 201, maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: 2.5, maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: "50", maxWaitMs: 200 }, "batch.maxEvents"],
      [{ maxEvents: 50, maxWaitMs: 0 }, "batch.maxWaitMs"],
      [{ maxEvents: 50, maxWaitMs: 60_001 }, "batch.maxWaitMs"],
      [{ maxEvents: 50 }, "maxWaitMs"],
      [{ maxEvents: 50, maxWaitMs: 200, size: 3 }, "size"],
      [true, "batch"],
      [[50, 200], "batch"],
    ] as const) {
      await refused("POST", "/configs", config({ batch }), field);
    }
    await refused(
      "POST",
      "/configs",
      config({ batch: { maxEvents: 50, maxWaitMs: 200 }, ordering: { enabled: true } }),
      "batch",
    );
    expect((await env.api.call("GET", "/configs")).body.cursor.data).to.have.length(before);
  });

  it("stores the batch field, shows it only when set, and never beside ordering", async () => {
    const plain = await env.createConfig(config({}));
    const shown = await env.api.call("GET", `/configs/${plain.id}`);
    expect(shown.body.data).to.not.have.property("batch");

    const batch = { maxEvents: 50, maxWaitMs: 200 };
    const c = await env.createConfig(config({ batch }));
    expect((await env.api.call("GET", `/configs/${c.id}`)).body.data.batch).to.deep.equal(batch);
    const listed = (await env.api.call("GET", `/configs?id=${c.id}`)).body.cursor.data[0];
    expect(listed.batch).to.deep.equal(batch);

    // Absent on update keeps it; ordering while it is kept is refused (the stored config is unchanged).
    const kept = await env.api.call("PUT", `/configs/${c.id}`, config({}));
    expect(kept.body.data.batch).to.deep.equal(batch);
    await refused("PUT", `/configs/${c.id}`, config({ ordering: { enabled: true } }), "batch");
    const unchanged = await env.api.call("GET", `/configs/${c.id}`);
    expect(unchanged.body.data.batch).to.deep.equal(batch);
    expect(unchanged.body.data).to.not.have.property("ordering");

    // null turns it off, then ordering is allowed; batching the ordered config is refused.
    const off = await env.api.call("PUT", `/configs/${c.id}`, config({ batch: null }));
    expect(off.status, off.text).to.equal(200);
    expect(off.body.data).to.not.have.property("batch");
    const ordered = await env.api.call("PUT", `/configs/${c.id}`, config({ ordering: { enabled: true } }));
    expect(ordered.status, ordered.text).to.equal(200);
    await refused("PUT", `/configs/${c.id}`, config({ batch }), "batch");
    const switched = await env.api.call("PUT", `/configs/${c.id}`, config({ ordering: null, batch }));
    expect(switched.status, switched.text).to.equal(200);
    expect(switched.body.data.batch).to.deep.equal(batch);
    expect(switched.body.data).to.not.have.property("ordering");
  });
});
