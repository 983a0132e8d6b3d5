import { loadavg } from "node:os";
import { gzipSync } from "node:zlib";
import { launchChromium } from "../../test/support/chromium.js";
import { createSession } from "../../test/support/portal-browser.js";
import { stopTestTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";

// bench/portal/first-load: what the consumer portal's first load costs. Bytes: index.html
// and the files it references, as served and gzip -9 (the API does not compress: a proxy in
// front may). Time to interactive: fresh Chromium contexts (cold cache) opening a session
// URL, from navigation start to the endpoints listed (the page's `portal:endpoints-shown`
// mark: token read, session bootstrapped, configs loaded and rendered) and to their health
// filled in (`portal:health-shown`: one /stats call per endpoint); medians of the loads,
// with DOMContentLoaded and load for reference.
// Usage: node dist/bench/portal/first-load.js [loads, default 9] [endpoints, default 5]

const LOADS = Number(process.argv[2] ?? 9);
const ENDPOINTS = Number(process.argv[3] ?? 5);

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const api = await startWebhooks({ args: ["--audit-topic", ""] });
try {
  for (let i = 0; i < ENDPOINTS; i++) {
    await api.call("POST", "/configs", {
      endpoint: `https://example.com/hook/${i}`,
      eventTypes: ["shop.order_paid"],
      name: `endpoint ${i}`,
    });
  }
  const session = await createSession(api, "uid:default");
  const base = session.url.split("#")[0]!;

  const html = await (await fetch(base)).text();
  const files = [...html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]!);
  const rows: [string, number, number][] = [];
  for (const [name, body] of [
    ["index.html", Buffer.from(html)],
    ...(await Promise.all(
      files.map(async (f) => [f, Buffer.from(await (await fetch(base + f)).arrayBuffer())] as const),
    )),
  ] as [string, Buffer][]) {
    rows.push([name, body.length, gzipSync(body, { level: 9 }).length]);
  }
  console.log("file\tbytes\tgzip -9");
  for (const [name, raw, gz] of rows) console.log(`${name}\t${raw}\t${gz}`);
  const sum = (i: 1 | 2) => rows.reduce((a, r) => a + r[i], 0);
  console.log(`total\t${sum(1)}\t${sum(2)}`);

  const browser = await launchChromium();
  const shown: number[] = [];
  const health: number[] = [];
  const dcl: number[] = [];
  const load: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    // A new session per load: the page removes the token from the URL after reading it.
    const { url } = await createSession(api, "uid:default");
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "load" });
    // Polled through the DevTools protocol: the page's CSP forbids Playwright's in-page eval.
    // The mark's time is the page's own, so the polling does not add to it.
    while (!(await page.evaluate('performance.getEntriesByName("portal:health-shown").length > 0'))) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const t = (await page.evaluate(`(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      const mark = (name) => performance.getEntriesByName(name)[0].startTime;
      return [mark("portal:endpoints-shown"), mark("portal:health-shown"), nav.domContentLoadedEventEnd, nav.loadEventEnd];
    })()`)) as [number, number, number, number];
    shown.push(t[0]);
    health.push(t[1]);
    dcl.push(t[2]);
    load.push(t[3]);
    await context.close();
  }
  await browser.close();
  const fmt = (xs: number[]) =>
    `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
  // The machine may be shared: its load says how much to trust the times.
  console.log(`loads: ${LOADS}, endpoints listed: ${ENDPOINTS}, load average ${loadavg()[0]!.toFixed(1)}`);
  console.log(`DOMContentLoaded: ${fmt(dcl)}`);
  console.log(`load event: ${fmt(load)}`);
  console.log(`interactive (the endpoints listed, links usable): ${fmt(shown)}`);
  console.log(`health shown (every endpoint's 24 h stats filled in): ${fmt(health)}`);
} finally {
  await api.stop();
  await stopTestTemporal();
}
