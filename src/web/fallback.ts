/**
 * Answers for requests no route takes, and for requests Node's HTTP parser refuses (issue 8
 * items 2 and 3). Every answer is `application/problem+json` whose `status` member equals the
 * status line.
 *
 *   - a path some route serves, with a method it does not take (`PROPFIND /api/runs/{id}`):
 *     405 `method-not-allowed` with `Allow` listing the path's methods;
 *   - any other path, whatever the method (`PROPFIND /`): 404 `not-found`;
 *   - a request the parser refuses before Koa sees it (bad request line, CL+TE, bad header
 *     characters…): 400, or 431 when its headers are too large, with a problem body of type
 *     `about:blank` (RFC 9457 §4.2.1: no semantics beyond the status) and `Connection: close`.
 *     A request timeout answers 408 the same way; a reset or closed socket gets nothing;
 *   - an `Expect` other than `100-continue` (issue 16 item 3): 417 with the same `about:blank`
 *     problem (Node's `checkExpectation` event; otherwise Node answers a bare 417);
 *   - an HTTP/1.1 request without `Host` (RFC 9112 §3.2): 400, the same `about:blank` problem
 *     (the server is created with Node's own bare-400 check off, so that this answer has a body);
 *   - `honestStatus()` guards all of it: an answer of 400 or above that a library wrote on its
 *     own — an empty body, or a problem whose `status` is not the status line's (a router's
 *     `allowedMethods()` turning our 404 into 405/501, as Bull Board's does under /admin/queues) —
 *     is rewritten into the problem for its status; 501 becomes 405 `method-not-allowed`.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type Router from "@koa/router";
import type { Middleware } from "koa";
import { RefusalCode } from "../engine/refusals.js";
import { sendProblem } from "./problems.js";

/** The last middleware: 405 with `Allow` for a known path, else 404. */
export function unmatchedRoute(routers: Router[]): Middleware {
  return (ctx) => {
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const allowed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.match(ctx.path, ctx.method).path) for (const m of layer.methods) allowed.add(m);
    }
    if (allowed.size > 0) {
      sendProblem(ctx, { code: RefusalCode.MethodNotAllowed, detail: `This endpoint answers ${[...allowed].join(", ")} only.` });
      ctx.set("Allow", [...allowed].join(", "));
      return;
    }
    sendProblem(ctx, { code: RefusalCode.NotFound, detail: "No such endpoint." });
  };
}

function problemStatus(body: unknown): number | null {
  if (typeof body !== "string") return null;
  try {
    const status = (JSON.parse(body) as { status?: unknown }).status;
    return typeof status === "number" ? status : null;
  } catch {
    return null;
  }
}

/** Wraps everything after the problem middleware: status line and problem body always agree. */
export function honestStatus(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status < 400) return;
    const empty = ctx.body === undefined || ctx.body === null || ctx.body === "";
    const mismatched = ctx.response.is("application/problem+json") && problemStatus(ctx.body) !== ctx.status;
    if (!empty && !mismatched) return;
    const allow = ctx.response.get("Allow");
    if (ctx.status === 404) sendProblem(ctx, { code: RefusalCode.NotFound, detail: "No such endpoint." });
    else if (ctx.status === 405 || ctx.status === 501) {
      sendProblem(ctx, { code: RefusalCode.MethodNotAllowed, detail: allow ? `This endpoint answers ${allow} only.` : "This endpoint does not answer this method." });
      if (allow) ctx.set("Allow", allow);
      else ctx.remove("Allow");
    } else {
      const status = ctx.status;
      const title = STATUS_CODES[status] ?? "Error";
      ctx.type = "application/problem+json";
      ctx.body = JSON.stringify({ type: "about:blank", title, status });
      ctx.status = status;
    }
  };
}

/** The `about:blank` problem document for a protocol-level refusal with `status`. */
function protocolProblem(status: number): { title: string; body: string } {
  const title = STATUS_CODES[status] ?? "Bad Request";
  const detail =
    status === 431
      ? "The request's header fields are too large."
      : status === 408
        ? "The request took too long to arrive."
        : status === 417
          ? "The request's Expect header asks for something this server does not do (only 100-continue is supported); send it without that expectation."
          : "The request is not valid HTTP/1.1.";
  return { title, body: JSON.stringify({ type: "about:blank", title, status, detail }) };
}

/** First middleware: 400 for an HTTP/1.1 request that names no `Host`. */
export function requireHost(): Middleware {
  return async (ctx, next) => {
    if (ctx.req.httpVersion === "1.1" && ctx.req.headers.host === undefined) {
      ctx.status = 400;
      ctx.type = "application/problem+json";
      ctx.body = protocolProblem(400).body;
      ctx.set("Connection", "close");
      return;
    }
    await next();
  };
}

/** The raw HTTP/1.1 answer to a request the parser refused: status line, headers, problem body. */
export function clientErrorResponse(status: number): string {
  const { title, body } = protocolProblem(status);
  return (
    `HTTP/1.1 ${status} ${title}\r\n` +
    "Content-Type: application/problem+json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "Connection: close\r\n\r\n" +
    body
  );
}

/**
 * Installs the `clientError` handler on `server`: a problem+json 400/408/431 where the socket can
 * still take one; and the `checkExpectation` handler: an `Expect` other than `100-continue`
 * (`Expect: 999-bogus`) answers 417 with an `about:blank` problem instead of Node's bare 417
 * (issue 16 item 3). The request is not routed, so nothing is looked up or changed.
 */
export function answerClientErrors(server: Server): void {
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const { body } = protocolProblem(417);
    res.writeHead(417, { "Content-Type": "application/problem+json", "Content-Length": Buffer.byteLength(body), Connection: "close" });
    res.end(body);
  });
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === "ECONNRESET" || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    socket.end(clientErrorResponse(status));
  });
}
