import { access } from "node:fs/promises";
import path from "node:path";
import express, { type RequestHandler, Router } from "express";
import type { PortalOptions } from "../core/options.js";
import { sendError } from "./errors.js";

// The consumer portal's page: the static files `npm run build` writes to dist/portal,
// served under /portal with a CSP that admits only this origin's scripts, styles and API
// (and images from the logo hosts), framed only by --portal-frame-ancestors. Paths that do
// not name a file fall back to index.html, for the page's own routes.

/** The Content-Security-Policy of every /portal answer. */
export function portalCsp(opts: PortalOptions): string {
  const logos = opts.logoHosts.map((h) => ` https://${h}`).join("");
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self'${logos}`,
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${opts.frameAncestors}`,
  ].join("; ");
}

/** A last path segment with an extension names a file: a missing one is a 404, not the page. */
const NAMES_A_FILE = /\/[^/]*\.[^/]+$/;

export function portalPage(opts: PortalOptions): Router {
  const r = Router();
  const csp = portalCsp(opts);
  const index = path.join(opts.assetsDir, "index.html");
  const headers: RequestHandler = (_req, res, next) => {
    res.setHeader("Content-Security-Policy", csp);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
    next();
  };
  r.use("/portal", headers, async (req, res, next) => {
    try {
      await access(index);
    } catch {
      return sendError(
        res,
        503,
        "UNAVAILABLE",
        `the portal page is not built: ${index} is missing (run npm run build, or point --portal-assets-dir at the built page)`,
      );
    }
    // "/portal" itself: to "/portal/", so the page's relative asset URLs resolve under it.
    if (req.originalUrl === "/portal" || req.originalUrl.startsWith("/portal?"))
      return res.redirect(301, `/portal/${req.originalUrl.slice("/portal".length)}`);
    next();
  });
  // Revalidated by ETag on every load, so a new build is picked up at once.
  r.use("/portal", express.static(opts.assetsDir, { index: "index.html", redirect: false, maxAge: 0 }));
  r.get("/portal{/*rest}", (req, res) => {
    if (NAMES_A_FILE.test(req.path)) return sendError(res, 404, "NOT_FOUND", `no file ${req.path}`);
    res.sendFile(index, { headers: { "Cache-Control": "no-cache" } });
  });
  r.all("/portal{/*rest}", (req, res) =>
    sendError(res, 405, "VALIDATION", `${req.method} is not served under /portal`),
  );
  return r;
}
