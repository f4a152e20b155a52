/**
 * One attempt of a `call http` (issue 40 item 2; src/calls/http/) against a real local HTTP server
 * that verifies the Standard Webhooks signature with the `standardwebhooks` library on its side,
 * as a callee would. Rows: the request (method, Path appended, JSON body or none, Content-Type,
 * Accept, Idempotency-Key stable across attempts, the endpoint's headers, one signature per live
 * secret); the classification (answer / retry with Retry-After / fail now); no redirect followed;
 * a bad Path or a refused address fails with no request; hostile callees (huge, lying
 * Content-Length, deep, slow, non-JSON, unstorable text, redirecting to a private address); the
 * backoff (exponential from 1 s, full jitter, 5 min cap, Retry-After floor, never past Deadline).
 */
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { attemptHttpCall, type HttpAttempt } from "../../src/calls/http/attempt.js";
import { BACKOFF_CAP_MS, nextAttemptDelayMs, parseRetryAfter } from "../../src/calls/http/backoff.js";
import { callUrl } from "../../src/calls/http/path.js";
import { newSecret } from "../../src/endpoints/endpoints.js";
import type { Resolver } from "../../src/outbox/address-guard.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  verified: boolean;
  verifiedWith: string[];
}

const SECRET = newSecret();
const OLD_SECRET = newSecret();
const seen: Seen[] = [];
let connections = 0;
const sockets = new Set<Socket>();
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const handlers = new Map<string, Handler>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const verifiedWith: string[] = [];
    for (const [name, secret] of [["current", SECRET], ["old", OLD_SECRET]] as const) {
      try {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        verifiedWith.push(name);
      } catch {
        /* not signed with this one */
      }
    }
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, verified: verifiedWith.length > 0, verifiedWith });
    const path = req.url!.split("?")[0];
    const h = handlers.get(path);
    if (h) return h(req, res, body);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, echo: body ? JSON.parse(body) : null }));
  });
});
server.on("connection", (s) => {
  connections++;
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});
let base = "";

test.before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

let n = 0;
const callId = () => `01J${String(++n).padStart(10, "0")}-call`;
const attempt = (over: Partial<HttpAttempt> & { route?: string }): HttpAttempt => ({
  endpoint: { name: "credit-bureau", url: `${base}/v1`, headers: { Authorization: "Bearer sk_credential" }, secrets: [SECRET] },
  method: "POST",
  path: over.route ?? null,
  input: { company: "ACME" },
  timeoutMs: 5000,
  callId: callId(),
  attempt: 1,
  allowPrivate: true,
  maxDepth: 64,
  ...over,
});
const seenAt = (path: string) => seen.filter((s) => s.url.split("?")[0] === path);

test.serial("POST: Path appended, JSON body, Content-Type/Accept json, Idempotency-Key, the endpoint's headers, a signature the callee verifies; the answer", async (t) => {
  const a = attempt({ route: "/score?mode=fast", input: { company: "ACME", country: "DE" } });
  const out = await attemptHttpCall(a);
  t.like(out, { kind: "answer", status: 200, attempt: 1 });
  t.deepEqual(out.kind === "answer" ? out.body : null, { ok: true, echo: { company: "ACME", country: "DE" } });
  const [req] = seenAt("/v1/score");
  t.is(req.method, "POST");
  t.is(req.url, "/v1/score?mode=fast");
  t.deepEqual(JSON.parse(req.body), { company: "ACME", country: "DE" });
  t.is(req.headers["content-type"], "application/json");
  t.is(req.headers.accept, "application/json");
  t.is(req.headers["idempotency-key"], a.callId);
  t.is(req.headers["webhook-id"], a.callId);
  t.is(req.headers.authorization, "Bearer sk_credential");
  t.true(req.verified);
});

test.serial("GET and DELETE send no body and no Content-Type; the signature covers the empty body", async (t) => {
  for (const method of ["GET", "DELETE"] as const) {
    const route = `/item-${method}`;
    const out = await attemptHttpCall(attempt({ method, route }));
    t.is(out.kind, "answer");
    const [req] = seenAt(`/v1${route}`);
    t.is(req.method, method);
    t.is(req.body, "");
    t.is(req.headers["content-type"], undefined);
    t.true(req.verified);
  }
});

test.serial("during a rotation each request carries two signatures, either verifies", async (t) => {
  const out = await attemptHttpCall(attempt({ route: "/rotating", endpoint: { name: "e", url: `${base}/v1`, headers: {}, secrets: [SECRET, OLD_SECRET] } }));
  t.is(out.kind, "answer");
  const [req] = seenAt("/v1/rotating");
  t.is(String(req.headers["webhook-signature"]).split(" ").length, 2);
  t.deepEqual(req.verifiedWith, ["current", "old"]);
});

test.serial("a retry carries the same Idempotency-Key; Retry-After is reported", async (t) => {
  let calls = 0;
  handlers.set("/v1/flaky", (_req, res) => {
    calls++;
    if (calls === 1) res.writeHead(503, { "retry-after": "7" }).end("busy");
    else res.writeHead(200, { "content-type": "application/json" }).end('{"score":710}');
  });
  const a = attempt({ route: "/flaky" });
  const first = await attemptHttpCall(a);
  t.like(first, { kind: "retry", status: 503, retryAfterMs: 7000, error: "HTTP 503 from credit-bureau" });
  const second = await attemptHttpCall({ ...a, attempt: 2 });
  t.like(second, { kind: "answer", attempt: 2, body: { score: 710 } });
  const reqs = seenAt("/v1/flaky");
  t.is(reqs.length, 2);
  t.is(reqs[0].headers["idempotency-key"], a.callId);
  t.is(reqs[1].headers["idempotency-key"], a.callId);
  t.true(reqs.every((r) => r.verified));
});

test.serial("408, 425, 429, 500, 502, 503, 504 are retried; every other non-2xx fails at once, naming the status and endpoint", async (t) => {
  for (const status of [408, 425, 429, 500, 502, 503, 504, 400, 401, 403, 404, 409, 410, 422, 501, 505]) {
    handlers.set(`/v1/s${status}`, (_req, res) => res.writeHead(status).end());
    const out = await attemptHttpCall(attempt({ route: `/s${status}` }));
    const retried = [408, 425, 429, 500, 502, 503, 504].includes(status);
    t.like(out, { kind: retried ? "retry" : "fail", status, error: `HTTP ${status} from credit-bureau` }, String(status));
  }
});

test.serial("no redirect is followed: a 302 to a private address fails the call and nothing connects there", async (t) => {
  let followed = 0;
  handlers.set("/v1/elsewhere", (_req, res) => {
    followed++;
    res.writeHead(200).end("{}");
  });
  for (const location of ["http://169.254.169.254/latest/meta-data/", `${base}/v1/elsewhere`]) {
    handlers.set("/v1/redirect", (_req, res) => res.writeHead(302, { location }).end());
    const out = await attemptHttpCall(attempt({ route: "/redirect" }));
    t.like(out, { kind: "fail", status: 302, error: "HTTP 302 from credit-bureau (redirects are not followed)" });
  }
  t.is(followed, 0);
});

test.serial("a Path that would leave the endpoint fails the call without a request", async (t) => {
  const before = connections;
  for (const path of ["/../admin", "/a/%2e%2e/b", "/a/.%2E/b", "//evil.example/x", "http://evil.example/", "@evil.example", "/a\\..\\b", "/a#frag", "/a b", "x"]) {
    const out = await attemptHttpCall(attempt({ route: path }));
    t.like(out, { kind: "fail", status: null }, path);
    t.regex(out.kind === "fail" ? out.error : "", /^invalid Path/, path);
  }
  t.is(connections, before);
  t.is(callUrl("https://api.example/v1/", "/score?x=1&y=..").toString(), "https://api.example/v1/score?x=1&y=..");
  t.is(callUrl("https://api.example/v1", "?q=1").toString(), "https://api.example/v1?q=1");
  t.is(callUrl("https://api.example:8443", "/a/b").toString(), "https://api.example:8443/a/b");
});

test.serial("the SSRF rules hold on every attempt: a loopback literal, and a name resolving to loopback, fail with no connection", async (t) => {
  const before = connections;
  const port = (server.address() as AddressInfo).port;
  const literal = await attemptHttpCall(attempt({ allowPrivate: false, endpoint: { name: "e", url: `https://127.0.0.1:${port}/v1`, headers: {}, secrets: [SECRET] } }));
  t.like(literal, { kind: "fail", status: null });
  t.regex(literal.kind === "fail" ? literal.error : "", /refused: 127\.0\.0\.1 is a loopback address/);
  const toLoopback: Resolver = (_host, _opts, cb) => cb(null, [{ address: "127.0.0.1", family: 4 }]);
  const named = await attemptHttpCall(attempt({ allowPrivate: false, resolve: toLoopback, endpoint: { name: "e", url: `https://scorer.example:${port}/v1`, headers: {}, secrets: [SECRET] } }));
  t.like(named, { kind: "fail", status: null });
  t.regex(named.kind === "fail" ? named.error : "", /refused: scorer\.example resolves to 127\.0\.0\.1/);
  const plain = await attemptHttpCall(attempt({ allowPrivate: false }));
  t.regex(plain.kind === "fail" ? plain.error : "", /refused: http:\/\/ is allowed only/);
  t.is(connections, before);
});

test.serial("connection errors and timeouts are retried; the error names no URL", async (t) => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const refused = await attemptHttpCall(attempt({ endpoint: { name: "e", url: `http://127.0.0.1:${port}/v1`, headers: {}, secrets: [SECRET] } }));
  t.like(refused, { kind: "retry", status: null });
  t.regex(refused.kind === "retry" ? refused.error : "", /^connection error: .*ECONNREFUSED/);
  t.false(JSON.stringify(refused).includes(String(port)));

  handlers.set("/v1/hang", () => undefined); // never answers
  const hung = await attemptHttpCall(attempt({ route: "/hang", timeoutMs: 300 }));
  t.like(hung, { kind: "retry", status: null, error: "timeout after 300ms" });
});

test.serial("hostile callees: huge, lying Content-Length, deep, slow, non-JSON, not an object, unstorable text — each an outcome, never a throw", async (t) => {
  handlers.set("/v1/huge", (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"a":"');
    const chunk = "x".repeat(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < 4 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end('"}');
    };
    pump();
    res.on("error", () => undefined);
  });
  handlers.set("/v1/declared-huge", (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(50 * 1024 * 1024) });
    res.write("{");
  });
  handlers.set("/v1/lying-short", (req, res) => {
    // declares 100 bytes, sends 10, closes
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"a":1,   ');
    setTimeout(() => req.socket.destroy(), 20);
  });
  handlers.set("/v1/deep", (_req, res) => res.writeHead(200).end("[".repeat(5000) + "]".repeat(5000)));
  handlers.set("/v1/deep-object", (_req, res) => res.writeHead(200).end('{"a":' + "[".repeat(100) + "]".repeat(100) + "}"));
  handlers.set("/v1/slow", (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"a":');
    const timer = setInterval(() => res.write(" "), 50);
    res.on("close", () => clearInterval(timer));
  });
  handlers.set("/v1/html", (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>hello</html>"));
  handlers.set("/v1/array", (_req, res) => res.writeHead(200).end("[1,2]"));
  handlers.set("/v1/nul", (_req, res) => res.writeHead(200).end('{"name":"a\\u0000b"}'));
  handlers.set("/v1/latin1", (_req, res) => res.writeHead(200).end(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])));
  handlers.set("/v1/empty", (_req, res) => res.writeHead(204).end());

  const expect: [string, "answer" | "retry" | "fail", RegExp][] = [
    ["/huge", "fail", /^invalid-response: larger than 1048576 bytes$/],
    ["/declared-huge", "fail", /^invalid-response: larger than 1048576 bytes$/],
    ["/lying-short", "retry", /^connection error/],
    ["/deep", "fail", /^invalid-response: nested deeper than 64 levels$/],
    ["/deep-object", "fail", /^invalid-response: nested deeper than 64 levels$/],
    ["/slow", "retry", /^timeout after 400ms$/],
    ["/html", "fail", /^invalid-response: not JSON$/],
    ["/array", "fail", /^invalid-response: not a JSON object$/],
    ["/nul", "fail", /^invalid-response: name holds a character that cannot be stored/],
    ["/latin1", "fail", /^invalid-response: not UTF-8 text$/],
  ];
  for (const [route, kind, error] of expect) {
    // only the slow callee meets its timeout: the others get a generous one (no wall-clock bound under load)
    const out = await attemptHttpCall(attempt({ route, timeoutMs: route === "/slow" ? 400 : 60_000 }));
    t.is(out.kind, kind, route);
    t.regex((out as { error?: string }).error ?? "", error, route);
  }
  t.like(await attemptHttpCall(attempt({ route: "/empty" })), { kind: "answer", status: 204, body: null });
});

test("the backoff: exponential from 1 s with full jitter, capped at 5 min, Retry-After a floor, never at or past the Deadline", (t) => {
  const top = () => 0.999999;
  t.is(nextAttemptDelayMs(1, { random: top }), 999);
  t.is(nextAttemptDelayMs(2, { random: top }), 1999);
  t.is(nextAttemptDelayMs(4, { random: top }), 7999);
  t.is(nextAttemptDelayMs(12, { random: top }), BACKOFF_CAP_MS - 1);
  t.is(nextAttemptDelayMs(60, { random: top }), BACKOFF_CAP_MS - 1);
  t.is(nextAttemptDelayMs(3, { random: () => 0 }), 0);
  const spread = new Set(Array.from({ length: 50 }, () => nextAttemptDelayMs(5)));
  t.true(spread.size > 10);
  for (const d of spread) t.true(d! >= 0 && d! < 16_000);
  t.is(nextAttemptDelayMs(1, { random: () => 0, retryAfterMs: 7000 }), 7000);
  const now = Date.parse("2026-11-28T10:00:00Z");
  t.is(nextAttemptDelayMs(1, { random: () => 0, retryAfterMs: 7000, now, deadline: new Date(now + 5000) }), null);
  t.is(nextAttemptDelayMs(1, { random: () => 0.5, now, deadline: new Date(now + 5000) }), 500);
  t.is(parseRetryAfter("12"), 12_000);
  t.is(parseRetryAfter("99999999"), 3600_000);
  t.is(parseRetryAfter(new Date(now + 30_000).toUTCString(), now), 30_000);
  t.is(parseRetryAfter("soon"), null);
});
