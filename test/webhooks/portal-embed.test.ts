import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import type { Browser } from "playwright-core";
import { launchChromium } from "../support/chromium.js";
import { createSession } from "../support/portal-browser.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * Embedding the portal in another app's page, in Chromium: the host app (another origin)
 * puts the session URL in an iframe. With --portal-frame-ancestors naming the host, the
 * page runs inside it; with the default ('none') the browser refuses to frame it.
 */
describe("consumer portal embedded in an iframe (Chromium)", function () {
  this.timeout(120_000);
  let host: Server;
  let hostOrigin: string;
  let frameSrc = "";
  let browser: Browser;
  const apis: WebhooksUnderTest[] = [];

  before(async () => {
    // The embedding app: one page whose iframe shows the session URL it was given.
    host = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<!doctype html><title>Host app</title><h1>Host app</h1><iframe title="Webhooks" src="${frameSrc}" width="1100" height="700"></iframe>`,
      );
    });
    await new Promise<void>((r) => host.listen(0, "127.0.0.1", r));
    hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    for (const api of apis) await api.stop();
    host?.close();
  });

  const serve = async (args: string[]) => {
    const api = await startWebhooks({ args: ["--audit-topic", "", ...args] });
    apis.push(api);
    return api;
  };

  it("runs inside the host app's iframe when --portal-frame-ancestors names the host", async () => {
    const api = await serve(["--portal-frame-ancestors", hostOrigin]);
    const created = await api.call("POST", "/configs", {
      endpoint: "https://embed.test/hook",
      eventTypes: ["shop.order_paid"],
      name: "Embedded orders",
    });
    expect(created.status, created.text).to.equal(200);
    frameSrc = (await createSession(api, "uid:default")).url;
    const page = await browser.newPage();
    try {
      await page.goto(hostOrigin);
      const frame = page.frameLocator('iframe[title="Webhooks"]');
      await frame.getByRole("heading", { name: "Endpoints" }).waitFor();
      await frame.getByRole("link", { name: "Embedded orders" }).waitFor();
    } finally {
      await page.close();
    }
  });

  it("is refused by the browser inside an iframe without --portal-frame-ancestors", async () => {
    const api = await serve([]);
    frameSrc = (await createSession(api, "uid:default")).url;
    const page = await browser.newPage();
    try {
      const refused = page.waitForEvent("console", {
        predicate: (m) => /frame-ancestors 'none'/.test(m.text()),
        timeout: 30_000,
      });
      await page.goto(hostOrigin);
      // Chromium: "Framing '<origin>/' violates the following Content Security Policy directive: \"frame-ancestors 'none'\"…"
      expect((await refused).text()).to.match(/Framing '.*' violates .*frame-ancestors 'none'/);
      const framed = page.frames().find((f) => f !== page.mainFrame());
      // The frame holds the browser's own error page, nothing of the portal.
      expect(framed?.url()).to.match(/^chrome-error:/);
      expect(await framed?.getByRole("heading", { name: "Endpoints" }).count()).to.equal(0);
    } finally {
      await page.close();
    }
  });
});
