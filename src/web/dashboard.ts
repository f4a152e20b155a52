/**
 * The queue dashboard: Bull Board (`@bull-board/api` + `@bull-board/koa`) at `/admin/queues`,
 * showing the `commands`, `mail` and `sweep` queues (issue 9 §5 "Queue dashboard"; interfaces.md
 * "GET /admin/queues").
 *
 * Sign-in is HTTP Basic so that a browser can open it: any user name, the admin token
 * (`SLOTFLOW_ADMIN_TOKEN`) as the password, compared in constant time. Without it every path under
 * `/admin/queues` answers 401 `unauthorized` (a problem document) with
 * `WWW-Authenticate: Basic realm="slotflow"`, so the browser asks. The admin API's bearer token is
 * accepted too (scripts). Jobs never carry a token (queues.ts), so the dashboard cannot show one.
 *
 * Nothing remote (issue 23 item 4): Bull Board's page links IBM Plex from fonts.googleapis.com —
 * an operator's browser would call a third party, and the page breaks offline. The link is removed
 * from the page (`withoutRemoteFonts`; the UI falls back to the system's sans-serif and monospace),
 * and every dashboard response carries a CSP that allows this origin only (`DASHBOARD_CSP`), so
 * anything remote a later Bull Board adds is blocked, not fetched.
 */
import basicAuth from "basic-auth";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Middleware } from "koa";
import { RefusalCode } from "../engine/refusals.js";
import type { Queues } from "../queue/queues.js";
import { sendProblem } from "./problems.js";

export const DASHBOARD_PATH = "/admin/queues";

/**
 * The dashboard's CSP: this origin only. Bull Board's React UI sets inline style attributes, hence
 * `'unsafe-inline'` for styles (no script is inline: its config is a JSON data block).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const REMOTE_FONTS = /<link\b[^>]*href="https:\/\/fonts\.(?:googleapis|gstatic)\.com[^"]*"[^>]*>\s*/g;

/**
 * Narrow screens (issue 30 item 5): Bull Board's status tab bar (`ul.statusTabs-<hash>`) is one
 * row that scrolls sideways under a fade, so at 360 px most tabs are cut off. Below 40rem it wraps
 * instead. The class is matched by its prefix (the hash changes between Bull Board releases); the
 * CSP allows inline styles ('unsafe-inline', for Bull Board's own style attributes).
 */
const PHONE_STYLE = `<style>@media (max-width: 40rem) { ul[class*="statusTabs-"] { flex-wrap: wrap; overflow: visible; -webkit-mask-image: none; mask-image: none; } }</style>`;

/** Bull Board's page with PHONE_STYLE added to its head. */
export function withPhoneStyle(page: string): string {
  return page.includes("</head>") ? page.replace("</head>", `${PHONE_STYLE}</head>`) : page;
}

/** Bull Board's page without its links to Google Fonts. */
export function withoutRemoteFonts(page: string): string {
  return page.replace(REMOTE_FONTS, "");
}

function same(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** True when the request signs in with the admin token: Basic (any user) or Bearer. */
export function dashboardSignedIn(authorization: string | undefined, adminToken: string): boolean {
  if (!authorization) return false;
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (bearer) return same(bearer[1], adminToken);
  const basic = basicAuth.parse(authorization);
  return basic !== undefined && same(basic.pass, adminToken);
}

/** Bull Board's Koa plugin over `queues`, at DASHBOARD_PATH. */
async function boardPlugin(queues: Queues): Promise<Middleware> {
  const [{ createBullBoard }, { BullMQAdapter }, { KoaAdapter }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/koa"),
  ]);
  const adapter = new KoaAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    // With SLOTFLOW_QUEUE_SHARDS > 1 each shard's queue is listed as `shard<i>-commands` (issue 17).
    queues: queues.commandShards.length === 1
      ? [queues.commands, queues.mail, queues.sweep].map((q) => new BullMQAdapter(q))
      : [
          ...queues.commandShards.map((q, i) => new BullMQAdapter(q, { prefix: `shard${i}-` })),
          ...queues.mailShards.map((q, i) => new BullMQAdapter(q, { prefix: `shard${i}-` })),
          new BullMQAdapter(queues.sweep),
        ],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: "slotflow queues" } },
  });
  return adapter.registerPlugin() as unknown as Middleware;
}

/**
 * Koa middleware serving the dashboard under DASHBOARD_PATH, behind the admin sign-in. Bull Board
 * (and its dependencies) is loaded on the first signed-in request, not at start-up: a web process
 * whose dashboard is never opened does not hold it in memory (issue 22 item 3).
 */
export function dashboardMiddleware(queues: Queues, adminToken: string): Middleware {
  let board: Promise<Middleware> | null = null;
  return async (ctx, next) => {
    if (ctx.path !== DASHBOARD_PATH && !ctx.path.startsWith(`${DASHBOARD_PATH}/`)) return next();
    if (!dashboardSignedIn(ctx.get("authorization") || undefined, adminToken)) {
      sendProblem(ctx, { code: RefusalCode.Unauthorized, detail: "Sign in with HTTP Basic: any user name, the admin token as the password." });
      ctx.set("WWW-Authenticate", 'Basic realm="slotflow", charset="UTF-8"');
      return;
    }
    ctx.set("Content-Security-Policy", DASHBOARD_CSP);
    ctx.set("X-Robots-Tag", "noindex, nofollow");
    if (!board) {
      board = boardPlugin(queues);
      board.catch(() => (board = null)); // a failed load is tried again on the next request
    }
    await (await board)(ctx, next);
    if (typeof ctx.body === "string" && ctx.response.is("html")) ctx.body = withPhoneStyle(withoutRemoteFonts(ctx.body));
  };
}
