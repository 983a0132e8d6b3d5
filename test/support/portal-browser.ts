import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { PORTAL_FEATURES } from "../../api/portal-features.js";
import type { WebhooksUnderTest } from "./webhooks-server.js";

// The consumer portal in Debian's Chromium (test/support/chromium.ts): sessions made through
// the API, an accessibility scan, and a helper that drives the page with the keyboard alone.

export interface PortalSession {
  id: string;
  url: string;
  token: string;
  expiresAt: string;
}

/**
 * A session of `tenant` (id or uid:<uid>) made the way an embedding app makes one; every
 * feature unless `body` names them (the product's default leaves out "secrets").
 */
export async function createSession(
  api: WebhooksUnderTest,
  tenant: string,
  body: Record<string, unknown> = {},
): Promise<PortalSession> {
  const answer = await api.call("POST", `/tenants/${encodeURIComponent(tenant)}/portal-sessions`, {
    features: [...PORTAL_FEATURES],
    ...body,
  });
  if (answer.status !== 201) throw new Error(`portal session: ${answer.status} ${answer.text}`);
  return answer.body as PortalSession;
}

const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Serious and critical accessibility violations of what the page shows now. axe's source is
 * evaluated through the DevTools protocol (page.evaluate), which the page's CSP
 * (script-src 'self') does not govern: the page itself runs under its real policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(await axeSource);
  const violations = await page.evaluate("axe.run(document).then((r) => r.violations)");
  return (violations as AxeViolation[]).filter((v) => v.impact === "serious" || v.impact === "critical");
}

// The focused element's name: its label (form controls), else its aria-label or text.
const FOCUSED_NAME = `(() => {
  const el = document.activeElement;
  if (!el) return "";
  if (el.labels && el.labels.length > 0) return el.labels[0].textContent.trim();
  return (el.getAttribute("aria-label") || el.textContent || "").trim();
})()`;

/** Presses Tab until the focused element's accessible name (label, text) matches `name`. */
export async function tabTo(page: Page, name: RegExp, maxTabs = 60): Promise<void> {
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press("Tab");
    const focused = String(await page.evaluate(FOCUSED_NAME));
    if (name.test(focused)) return;
  }
  throw new Error(`no focusable element named ${name} within ${maxTabs} tabs`);
}
