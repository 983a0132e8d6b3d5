import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect } from "chai";
import { fromRoot } from "../../common/paths.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/** The receiver-side verification snippet of docs/webhooks/security.md, run against a real signed delivery. */
describe("the signature verification snippet of the manual", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  let receiver: Receiver;

  before(async () => {
    api = await startWebhooks({ args: ["--audit-topic", ""] });
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await api?.stop();
  });

  it("accepts our deliveries, including both signatures of a rotation overlap, and rejects tampering", async () => {
    const page = readFileSync(fromRoot("docs/webhooks/security.md"), "utf8");
    const snippet = /With Node only:\n\n```js\n([\s\S]*?)```/.exec(page)?.[1];
    expect(snippet, "snippet in docs/webhooks/security.md").to.be.a("string");
    const file = path.join(await mkdtemp(path.join(tmpdir(), "snippet-")), "verify.mjs");
    writeFileSync(file, snippet!);
    const { verify } = await import(pathToFileURL(file).href);

    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["readme.check"],
    });
    const { id, secret } = created.body.data;
    await api.call("POST", `/configs/${id}/test`);
    const first = receiver.requests.at(-1)!;
    expect(verify(secret, first.headers, Buffer.from(first.body))).to.equal(true);
    expect(verify(secret, first.headers, Buffer.from(`${first.body} `))).to.equal(false);

    const rotated = await api.call("PUT", `/configs/${id}/secret/change`, { overlap: "1h" });
    await api.call("POST", `/configs/${id}/test`);
    const during = receiver.requests.at(-1)!;
    expect(String(during.headers["svc-webhook-signature"]).split(" ")).to.have.length(2);
    expect(verify(secret, during.headers, Buffer.from(during.body)), "old secret").to.equal(true);
    expect(verify(rotated.body.data.secret, during.headers, Buffer.from(during.body)), "new secret").to.equal(
      true,
    );
  });
});
