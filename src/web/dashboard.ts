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
 *
 * **Read, and retry failed jobs — nothing else** (issue 28 item 1: a page on another site
 * auto-posted a form to Bull Board's "add job" in a browser signed in with Basic, and the worker
 * cancelled a run). A browser re-sends Basic credentials by itself, so they prove nothing about
 * which page sent a request. Every request other than GET/HEAD is refused unless all of
 * (`dashboardWriteRefusal`):
 * 1. it is one of the two kept actions — `PUT …/api/queues/:queue/:jobId/retry` and
 *    `PUT …/api/queues/:queue/retry/failed` (405 `method-not-allowed` for any other: add, edit
 *    data, duplicate, remove, clean, promote, pause, resume, empty, obliterate, concurrency, rate
 *    limit, schedulers). Why retry is kept: it is the documented way to finish a command that
 *    failed for good once its cause is fixed (a key put back in the ring, a rollout finished);
 *    it re-runs the job's own signed data, and a command applies at most once
 *    (`applied_commands`). Why the rest is not: adding or editing makes job data slotflow did not
 *    sign (the worker would refuse it anyway, queue/signature.ts), and removing, emptying,
 *    pausing or cleaning silently drops or stalls commands the service already answered 202 for;
 * 2. it comes from this origin: `Sec-Fetch-Site`, when sent, is `same-origin`, and `Origin` is
 *    this server's (`ctx.protocol://ctx.host`, so behind a proxy with SLOTFLOW_TRUST_PROXY);
 *    `Origin` may be absent only for a script signing in with the bearer token, which no browser
 *    attaches by itself;
 * 3. it carries `X-Slotflow-Dashboard: 1` — a header no form can send and no other origin can
 *    add without a CORS preflight, which this server never grants. Bull Board's UI (axios) sends
 *    no custom header, so the dashboard page loads `DASHBOARD_SCRIPT` first: a same-origin script
 *    (allowed by the CSP) that adds the header to the page's own XHR and fetch requests;
 * 4. a body, when there is one, is `application/json`.
 * Refusals 2–4 answer 403 with a problem document of type `…/problems/cross-site-request`. Every
 * adapter is also created with `allowCompletedRetries: false`, so the UI offers retry on failed
 * jobs only.
 */
import basicAuth from "basic-auth";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, Middleware } from "koa";
import { RefusalCode, refuse } from "../engine/refusals.js";
import type { Queues } from "../queue/queues.js";
import { PROBLEM_BASE, sendProblem } from "./problems.js";
import { fetchSite, isOwnOrigin } from "../auth/same-origin.js";

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

/** The header a state-changing dashboard request must carry (value `1`). */
export const DASHBOARD_HEADER = "X-Slotflow-Dashboard";

/** Where the dashboard page loads DASHBOARD_SCRIPT from. */
export const DASHBOARD_SCRIPT_PATH = `${DASHBOARD_PATH}/slotflow-dashboard.js`;

/**
 * The script the dashboard page loads before Bull Board's own: adds DASHBOARD_HEADER to every
 * XHR and fetch the page makes to its own origin (Bull Board's API client is axios over XHR).
 */
export const DASHBOARD_SCRIPT = `// slotflow: marks the dashboard's own API requests (src/web/dashboard.ts, issue 28 item 1)
(() => {
  const header = ${JSON.stringify(DASHBOARD_HEADER)};
  const own = (url) => { try { return new URL(url, location.href).origin === location.origin; } catch { return false; } };
  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) { this.slotflowOwn = own(url); return open.call(this, method, url, ...rest); };
  XMLHttpRequest.prototype.send = function (body) { if (this.slotflowOwn) this.setRequestHeader(header, "1"); return send.call(this, body); };
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const request = new Request(input, init);
    if (own(request.url)) request.headers.set(header, "1");
    return fetch.call(this, request);
  };
})();
`;

/** The page with DASHBOARD_SCRIPT loaded before anything else (first in `<head>`). */
export function withDashboardScript(page: string): string {
  return page.replace(/<head>/i, (head) => `${head}\n<script src="${DASHBOARD_SCRIPT_PATH}"></script>`);
}

/**
 * Second path segments that name a Bull Board action of a queue (`/api/queues/:queue/<word>/…`),
 * never a job: `PUT /api/queues/q/clean/retry` is Bull Board's *clean* route (status "retry"), not
 * a retry of a job called "clean", so the job-retry pattern must not admit them (issue 38,
 * informational finding).
 */
const QUEUE_ACTION_WORDS = "add|clean|concurrency|default-job-options|empty|job-data-schema|job-schedulers|metrics|obliterate|pause|promote|rate-limit|resume|retry|workers";

/** The only state-changing dashboard requests kept (paths relative to DASHBOARD_PATH): retries. */
const KEPT_ACTIONS = [/^\/api\/queues\/[^/]+\/retry\/failed$/, new RegExp(`^/api/queues/[^/]+/(?!(?:${QUEUE_ACTION_WORDS})/)[^/]+/retry$`, "i")];

/**
 * Why a state-changing (not GET/HEAD) dashboard request is refused, or null when it is one of the
 * kept actions sent by the dashboard's own page (or a bearer-token script): see the module
 * docstring for each rule. `viaBearer`: signed in with `Authorization: Bearer`, not Basic.
 */
export function dashboardWriteRefusal(ctx: Pick<Context, "method" | "path" | "protocol" | "host" | "get">, viaBearer: boolean): { status: 403 | 405; detail: string } | null {
  // src/auth/same-origin.ts, strictly: the dashboard's changes come from its own script only
  const site = fetchSite(ctx);
  const origin = ctx.get("origin");
  if (site && site !== "same-origin") return { status: 403, detail: `Refused: this request was sent by a page on another site (Sec-Fetch-Site: ${site}). The queue dashboard accepts changes only from its own page.` };
  if (origin ? !isOwnOrigin(ctx, origin, null) : !viaBearer) return { status: 403, detail: "Refused: this request does not come from the queue dashboard's own origin (Origin header). The queue dashboard accepts changes only from its own page." };
  const relative = ctx.path.slice(DASHBOARD_PATH.length);
  if (ctx.method !== "PUT" || !KEPT_ACTIONS.some((re) => re.test(relative))) {
    return { status: 405, detail: "The queue dashboard only reads, and retries failed jobs; it cannot add, edit, remove, clean, promote, pause or empty (docs/operations.md \"The queue dashboard\")." };
  }
  if (ctx.get(DASHBOARD_HEADER) !== "1") return { status: 403, detail: `Refused: a change on the queue dashboard must carry the header ${DASHBOARD_HEADER}: 1 (the dashboard's page sends it).` };
  const hasBody = Number(ctx.get("content-length") || 0) > 0 || ctx.get("transfer-encoding") !== "";
  if (hasBody && !/^application\/json\s*(;|$)/i.test(ctx.get("content-type"))) return { status: 403, detail: "Refused: a change on the queue dashboard has no body or a JSON one." };
  return null;
}

function sendRefusal(ctx: Context, refusal: { status: 403 | 405; detail: string }): void {
  if (refusal.status === 405) {
    sendProblem(ctx, refuse(RefusalCode.MethodNotAllowed, refusal.detail));
    ctx.set("Allow", "GET, HEAD");
    return;
  }
  ctx.status = 403;
  ctx.type = "application/problem+json";
  ctx.body = JSON.stringify({ type: `${PROBLEM_BASE}cross-site-request`, title: "Refused: not sent by the dashboard's own page", status: 403, detail: refusal.detail, code: "cross-site-request" });
}

function same(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** True when the request signs in with the admin token: Basic (any user) or Bearer. */
export function dashboardSignedIn(authorization: string | undefined, adminToken: string): boolean {
  return dashboardSignIn(authorization, adminToken) !== null;
}

/** How the request signs in with the admin token: `"bearer"`, `"basic"` (any user), or null. */
export function dashboardSignIn(authorization: string | undefined, adminToken: string): "bearer" | "basic" | null {
  if (!authorization) return null;
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (bearer) return same(bearer[1], adminToken) ? "bearer" : null;
  const basic = basicAuth.parse(authorization);
  return basic !== undefined && same(basic.pass, adminToken) ? "basic" : null;
}

/** Every queue's adapter: retries of failed jobs only (completed ones are not offered). */
const ADAPTER_OPTIONS = { allowRetries: true, allowCompletedRetries: false } as const;

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
      ? [queues.commands, queues.mail, queues.sweep].map((q) => new BullMQAdapter(q, ADAPTER_OPTIONS))
      : [
          ...queues.commandShards.map((q, i) => new BullMQAdapter(q, { ...ADAPTER_OPTIONS, prefix: `shard${i}-` })),
          ...queues.mailShards.map((q, i) => new BullMQAdapter(q, { ...ADAPTER_OPTIONS, prefix: `shard${i}-` })),
          new BullMQAdapter(queues.sweep, ADAPTER_OPTIONS),
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
    const signIn = dashboardSignIn(ctx.get("authorization") || undefined, adminToken);
    if (!signIn) {
      sendProblem(ctx, { code: RefusalCode.Unauthorized, detail: "Sign in with HTTP Basic: any user name, the admin token as the password." });
      ctx.set("WWW-Authenticate", 'Basic realm="slotflow", charset="UTF-8"');
      return;
    }
    ctx.set("Content-Security-Policy", DASHBOARD_CSP);
    ctx.set("X-Robots-Tag", "noindex, nofollow");
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      const refusal = dashboardWriteRefusal(ctx, signIn === "bearer");
      if (refusal) return sendRefusal(ctx, refusal);
    } else if (ctx.path === DASHBOARD_SCRIPT_PATH) {
      ctx.type = "text/javascript; charset=utf-8";
      ctx.set("X-Content-Type-Options", "nosniff");
      ctx.body = DASHBOARD_SCRIPT;
      return;
    }
    if (!board) {
      board = boardPlugin(queues);
      board.catch(() => (board = null)); // a failed load is tried again on the next request
    }
    await (await board)(ctx, next);
    if (typeof ctx.body === "string" && ctx.response.is("html")) ctx.body = withDashboardScript(withPhoneStyle(withoutRemoteFonts(ctx.body)));
  };
}
