/**
 * Fuzz suite (issue 8 "Suites that keep it so"): generated requests against one real
 * `slotflow serve` on PostgreSQL and Redis — the public callback endpoint (tokens, bodies,
 * encodings, content types, methods, Idempotency-Key), raw malformed HTTP over a socket, the admin API (auth,
 * mutated `.flow` sources, malformed input), the raise path (forged JWTs) and the v0.4 doors
 * (sign-in, inbox, task pages, Slack interactions, forwarding).
 *
 * Generation is fast-check with a fixed seed (`FUZZ_SEED`, default 20261122), so a run is
 * reproducible; at least 10,000 requests in all. Invariants:
 *   - every answer: no 5xx but 503 (and 500 `handler-failed`, the contract's answer when a
 *     workflow's own code fails), problem+json with a matching `status` for every 4xx/5xx, no
 *     stack trace or path in a body (harness.ts `checkAnswer`);
 *   - a refused request changes no row: the database's fingerprint is compared around every batch
 *     whose answers were all refusals;
 *   - no token of any minted link, no endpoint's signing secret or URL in a log line, in Redis, or
 *     in a pg_dump; neither the admin token nor the JWT secret in a log line.
 *
 * Run with `npm run test:fuzz` (ava.fuzz.config.js); not part of `npm test`.
 */
import test, { type ExecutionContext } from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { SignJWT } from "jose";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, portOf, startRun, uniqueTitle } from "../helpers/callback.js";
import { linksIn, parseEmails, tokenOf } from "../helpers/mail.js";
import { ADMIN_TOKEN, eventually, JWT_SECRET, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { redisText } from "../helpers/redis-text.js";
import { checkAnswer, parseRawAnswer, pgDump, pool, send, sendRaw, snapshot, type FuzzAnswer, type FuzzRequest } from "./harness.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const WIDTH = 6;
const BATCH = 250;
const RUNS = 30;

let cluster: Cluster;
let port: number;
let tokens: string[] = [];
let runIds: string[] = [];
let total = 0;
let comparedBatches = 0;

test.before(async () => {
  cluster = await startCluster("fuzz", { env: { SLOTFLOW_RATE_LIMIT_PER_MINUTE: "10000000", SLOTFLOW_SWEEP_INTERVAL_MS: "1000", SLOTFLOW_DEV_SIGN_IN: "1" } });
  port = portOf(cluster.baseUrl);
  await deployFixture(cluster.baseUrl, "callback-basic.flow");
  const titles: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const title = uniqueTitle("fuzz");
    titles.push(title);
    runIds.push(await startRun(cluster.baseUrl, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } }));
  }
  // every link arrives by email; wait until every message is sent, so the database is quiet
  tokens = await eventually(async () => {
    const found = [...new Set(parseEmails(cluster.output()).flatMap(linksIn).map(tokenOf))];
    return found.length >= RUNS * 3 ? found : null;
  }, 60_000);
  await eventually(async () => Number((await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM outbox WHERE status = 'pending'"))[0].n) === 0, 60_000);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

// --- generators ----------------------------------------------------------------------------------

const OTHER_METHODS = ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "MKCOL", "LOCK", "UNLOCK", "SEARCH", "PURGE", "REPORT", "MOVE", "COPY"];
const method = fc.oneof({ weight: 6, arbitrary: fc.constant("POST") }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) });

const tokenLike = () =>
  fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 0, max: 10_000 }).map((i) => tokens[i % tokens.length]) },
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("base64url")) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `sfl_${Buffer.from(b).toString("base64url")}`) },
    // a live token with one character changed (a typo the checksum must catch)
    {
      weight: 1,
      arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(..."ABCxyz019-_")).map(([i, at, c]) => {
        const tok = tokens[i % tokens.length];
        const k = at % tok.length;
        return tok.slice(0, k) + (tok[k] === c ? "Q" : c) + tok.slice(k + 1);
      }),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom("", "%00", "..", "%2e%2e", "a".repeat(3000), "%ZZ", "[redacted]", "%F0%9F", "%ED%A0%80") },
  );

const SHAPES: [number, (t: string) => string][] = [
  [12, (t) => `/api/workflow/callback/${t}`],
  [1, (t) => `/API/WORKFLOW/CALLBACK/${t}`],
  [1, (t) => `/api/workflow//callback/${t}`],
  [1, (t) => `/api/workflow/callback/..;/${t}`],
  [1, (t) => `/api/workflow/callback/${t}/`],
  [1, (t) => `/api/workflow/callback/${t}?next=%2F&x=1`],
  [1, (t) => `/api/workflow/callback/${t}/x`],
];
const callbackPath = fc
  .tuple(tokenLike(), fc.oneof(...SHAPES.map(([weight, f]) => ({ weight, arbitrary: fc.constant(f) }))))
  .map(([t, shape]) => shape(t));

const hostileText = fc.constantFrom(
  '{"__proto__": {}}',
  '{"ok": true, "note": "x", "__proto__": {}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  '{"prototype": 1}',
  '{"tags": [{"__proto__": 1}], "count": 1, "amount": 1, "comment": null, "due": "2026-01-01T00:00:00Z"}',
  '{"ok": true, "note": "a\\u0000b"}',
  '{"ok": true, "note": "\\ud800"}',
  '{"ok": true, "note": "\\udc00x"}',
  '{"count": 1, "amount": 1e999, "comment": null, "due": "x", "tags": []}',
  "null",
  "[]",
  '"\\ud800"',
  "1e999",
  " ",
  "{",
  '{"ok": tru',
);
/**
 * Issue 16: JSON text nested up to 100,000 deep (arrays, objects, both), very wide objects and
 * arrays, long keys and huge numbers — built as text, without recursion — placed where a body
 * holds values: the whole body, `note`, `tags`, `count`, an undeclared property, a duplicated key,
 * run input.
 */
const nestDepth = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: 100, max: 5000 }) },
  { weight: 1, arbitrary: fc.constantFrom(10_000, 30_000, 100_000) },
);
function nestedText(depth: number, shape: "array" | "object" | "mixed", leaf: string): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    const array = shape === "array" || (shape === "mixed" && i % 2 === 0);
    open.push(array ? "[" : '{"k":');
    close.push(array ? "]" : "}");
  }
  return open.join("") + leaf + close.reverse().join("");
}
const LEAVES = ["1", '"x"', "null", "[]", "{}", "true"];
const hugeValue = fc.oneof(
  fc.tuple(nestDepth, fc.constantFrom("array", "object", "mixed") as fc.Arbitrary<"array" | "object" | "mixed">, fc.constantFrom(...LEAVES)).map(([d, s, l]) => nestedText(d, s, l)),
  fc.integer({ min: 1000, max: 50_000 }).map((n) => `[${Array.from({ length: n }, (_, i) => String(i % 10)).join(",")}]`),
  fc.integer({ min: 500, max: 8000 }).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`),
  fc.integer({ min: 1000, max: 60_000 }).map((n) => `{${JSON.stringify("k".repeat(n))}:1}`),
  fc.constantFrom("1e308", "-1e308", "1e400", "-1e400", "1e-400", "-0", "9".repeat(5000), `0.${"1".repeat(5000)}`, "123456789012345678901234567890", "1E+2147483648"),
);
const HOLES = [
  "HOLE",
  '{"ok":true,"note":HOLE}',
  '{"ok":true,"note":"x","note":HOLE}',
  '{"ok":true,"note":"x","extra":HOLE}',
  '{"count":HOLE,"amount":1,"comment":null,"due":"2026-01-01T00:00:00Z","tags":[]}',
  '{"count":1,"amount":1,"comment":null,"due":"2026-01-01T00:00:00Z","tags":HOLE}',
  '{"job":HOLE}',
  '{"job":{"title":"t","contact":"c@example.test","handled":HOLE}}',
];
const hugeJson = fc.tuple(fc.constantFrom(...HOLES), hugeValue).map(([hole, v]) => hole.replace("HOLE", () => v));

/**
 * Issue 16 ("every new endpoint"): the later JSON endpoints' own bodies with a hole —
 * `PUT /api/endpoints/{name}` `{kind, url}` and `POST /api/runs/{id}/cancel` `{reason}`. A
 * duplicated `url` whose last value is a good URL is accepted (JSON.parse keeps the last), so
 * some PUTs create or update an endpoint and answer its secret, which must then never be in a log
 * line, in Redis or in a pg_dump. A cancel's `reason` hole is never a string (422); a good
 * reason beside an undeclared member is refused too (422 naming the member, as every admin body
 * refuses undeclared members), so no cancel here changes a run.
 */
const ENDPOINT_URL = "https://hooks.example.test/services/T0FUZZ/B0FUZZ/fuzz-url-credential-7f3a9c";
const ENTRY_HOLES: Partial<Record<string, string[]>> = {
  endpoint: [
    '{"kind":"webhook","url":HOLE}',
    `{"kind":HOLE,"url":"${ENDPOINT_URL}"}`,
    `{"kind":"webhook","url":"${ENDPOINT_URL}","extra":HOLE}`,
    `{"kind":"slack","url":HOLE,"url":"${ENDPOINT_URL}"}`,
    `{"kind":"webhook","url":HOLE,"url":"${ENDPOINT_URL}"}`,
  ],
  cancel: ['{"reason":HOLE}', '{"reason":"fuzz","reason":HOLE}', '{"reason":"fuzz","extra":HOLE}'],
};
/** `hugeJson` for one entry point: the common holes and the entry's own. */
const hugeJsonFor = (entry: string) => fc.tuple(fc.constantFrom(...HOLES, ...(ENTRY_HOLES[entry] ?? [])), hugeValue).map(([hole, v]) => hole.replace("HOLE", () => v));
/** Signing secrets answered by PUT /api/endpoints (the deep-JSON test); the last test looks for them. */
const endpointSecrets: string[] = [];

const jsonText = fc.oneof(
  { weight: 1, arbitrary: hugeJson },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? "null") },
  { weight: 2, arbitrary: fc.record({ ok: fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.boolean()), note: fc.oneof(fc.string({ unit: "binary" }), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }).map((v) => JSON.stringify(v)) },
);

const CONTENT_TYPES = [
  "application/json",
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "application/problem+json",
  "application/merge-patch+json",
  "application/json; charset=latin1",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonx",
  "*/*",
  "",
];
const ENCODINGS = ["", "", "", "", "gzip", "gzip-false", "deflate-false", "br", "identity", "x-custom", "gzip, deflate"];

interface BodySpec {
  text: string | null;
  contentType: string;
  encoding: string;
}
const bodySpec = fc.record({
  text: fc.option(jsonText, { freq: 5 }),
  contentType: fc.constantFrom(...CONTENT_TYPES),
  encoding: fc.constantFrom(...ENCODINGS),
});

/** Headers and bytes for a body spec; every 97th request (by `index`) sends a body over the 64 KiB limit instead. */
function encodeBody(spec: BodySpec, index: number): { headers: Record<string, string>; body?: Buffer } {
  const headers: Record<string, string> = {};
  if (spec.contentType) headers["content-type"] = spec.contentType;
  if (spec.text === null) return { headers };
  let bytes = Buffer.from(index % 97 === 0 ? JSON.stringify({ ok: true, note: "x".repeat(70_000) }) : spec.text, "utf8");
  switch (spec.encoding) {
    case "gzip":
      bytes = gzipSync(bytes);
      headers["content-encoding"] = "gzip";
      break;
    case "br":
      bytes = brotliCompressSync(bytes);
      headers["content-encoding"] = "br";
      break;
    case "gzip-false":
      headers["content-encoding"] = "gzip";
      break;
    case "deflate-false":
      headers["content-encoding"] = "deflate";
      break;
    case "":
      break;
    default:
      headers["content-encoding"] = spec.encoding;
  }
  return { headers, body: bytes };
}

/** `Idempotency-Key` values: mostly none; printable ASCII ones, an empty one, an overlong one. */
const idempotencyKey = fc.option(
  fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(/^[\x20-\x7e]{1,40}$/).map((k) => k.trim() || "k") },
    { weight: 1, arbitrary: fc.constantFrom("", "k".repeat(300), "same-key") },
  ),
  { freq: 3 },
);

function callbackRequests(n: number): FuzzRequest[] {
  return fc.sample(fc.tuple(method, callbackPath, bodySpec, idempotencyKey), { seed: SEED, numRuns: n }).map(([m, path, spec, key], i) => {
    const { headers, body } = encodeBody(spec, i);
    if (key !== null) headers["idempotency-key"] = key;
    return { method: m, path, headers, body, label: `${m} ${path.slice(0, 90)} ${JSON.stringify(headers)} ${spec.text?.slice(0, 80) ?? "(no body)"}` };
  });
}

/** Raw bytes the HTTP parser may or may not accept. */
const rawBytes = fc.oneof(
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        method: fc.constantFrom("GET", "POST", "PROPFIND", "G ET", "", "POST\u0000", "P\u00d8ST", "post", "BREW"),
        path: fc.oneof(fc.constantFrom("/", "/healthz", "*", "", "/api/workflow/callback/x", "http://x/y", "/\u0000", "/a b"), fc.string({ unit: "binary", maxLength: 50 })),
        version: fc.constantFrom("HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "", "HTTP/9"),
        headers: fc.array(
          fc.oneof(
            fc.constantFrom(
              "Host: x",
              "Content-Length: 5",
              "Content-Length: -1",
              "Content-Length: 1, 2",
              "Content-Length: 99999999999999999999",
              "Transfer-Encoding: chunked",
              "Transfer-Encoding: gzip, chunked",
              "Transfer-Encoding: chunked, identity",
              "Content-Type: application/json",
              "Content-Encoding: gzip",
              "X-Bad: a\u0001b",
              "X-Bad\u0000: v",
              " Folded: yes",
              "NoColon",
              `X-Big: ${"b".repeat(20_000)}`,
            ),
            fc.tuple(fc.string({ maxLength: 20 }), fc.string({ unit: "binary", maxLength: 40 })).map(([k, v]) => `${k}: ${v}`),
          ),
          { maxLength: 6 },
        ),
        body: fc.constantFrom("", "{}", "0\r\n\r\n", "5\r\n{}\r\n0\r\n\r\n", "zz\r\n", '{"ok": true, "note": "x"}'),
        lineEnd: fc.constantFrom("\r\n", "\r\n", "\n", "\r"),
      })
      .map((r) => Buffer.from(`${r.method} ${r.path} ${r.version}${r.lineEnd}${r.headers.map((h) => h + r.lineEnd).join("")}${r.lineEnd}${r.body}`, "utf8")),
  },
);

/** A `.flow` source mutated by a few edits: deletions, insertions, duplicated lines, NULs, surrogates. */
function mutatedSources(n: number): string[] {
  const base = readFileSync(join(ROOT, "test", "fixtures", "callback-basic.flow"), "utf8").replace("workflow CbBasic", "workflow FuzzTarget");
  const edit = fc.oneof(
    fc.tuple(fc.constant("delete" as const), fc.nat(), fc.integer({ min: 1, max: 40 })),
    fc.tuple(fc.constant("insert" as const), fc.nat(), fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("\u0000", "\ud800", "{", "}", "->", "state", "@maxLength(", "\n", "\"", "//", "list<"))),
    fc.tuple(fc.constant("dup" as const), fc.nat(), fc.constant(0)),
  );
  return fc.sample(fc.array(edit, { minLength: 0, maxLength: 4 }), { seed: SEED + 1, numRuns: n }).map((edits) => {
    let s = base;
    for (const [kind, at, arg] of edits) {
      const i = at % (s.length + 1);
      if (kind === "delete") s = s.slice(0, i) + s.slice(i + (arg as number));
      else if (kind === "insert") s = s.slice(0, i) + (arg as string) + s.slice(i);
      else {
        const lines = s.split("\n");
        const j = at % lines.length;
        lines.splice(j, 0, lines[j]);
        s = lines.join("\n");
      }
    }
    return s;
  });
}

const adminAuth = fc.oneof(
  { weight: 6, arbitrary: fc.constant(`Bearer ${ADMIN_TOKEN}`) },
  { weight: 1, arbitrary: fc.constantFrom("", "Bearer", "Bearer wrong", `Basic ${Buffer.from(`x:${ADMIN_TOKEN}`).toString("base64")}`, `bearer  ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN}x`) },
);

/** Deploys of `sources` (odd auth and content types among them), then `n` other admin requests. */
function adminRequests(n: number, sources: string[]): { deploys: FuzzRequest[]; others: FuzzRequest[] } {
  const name = fc.oneof(fc.constantFrom("CbBasic", "FuzzTarget", "%00", "..", "%2F", "a".repeat(300)), fc.string({ maxLength: 20 }).map(encodeURIComponent));
  const runId = fc.oneof(fc.integer({ min: 0, max: 1000 }).map((i) => runIds[i % runIds.length]), fc.uuid(), fc.string({ maxLength: 40 }).map(encodeURIComponent), fc.constantFrom("%00", ""));
  const input = fc.oneof(
    jsonText,
    fc.record({ job: fc.record({ title: fc.string({ unit: "binary", maxLength: 20 }), contact: fc.string({ maxLength: 20 }), handled: fc.oneof(fc.integer(), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: [] }) }).map((v) => JSON.stringify(v)),
  );
  const req = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(adminAuth, name, input, fc.constantFrom(...CONTENT_TYPES)).map(([auth, nm, body, type]): FuzzRequest => ({ method: "POST", path: `/api/workflows/${nm}/runs`, headers: { authorization: auth, ...(type ? { "content-type": type } : {}) }, body: Buffer.from(body), label: `start ${nm} ${body.slice(0, 80)}` })) },
    { weight: 2, arbitrary: fc.tuple(adminAuth, name).map(([auth, nm]): FuzzRequest => ({ method: "GET", path: `/api/workflows/${nm}`, headers: { authorization: auth }, label: `GET workflow ${nm}` })) },
    { weight: 2, arbitrary: fc.tuple(adminAuth, runId, fc.boolean()).map(([auth, id, outbox]): FuzzRequest => ({ method: "GET", path: `/api/runs/${id}${outbox ? "/outbox" : ""}`, headers: { authorization: auth }, label: `GET run ${id}` })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...OTHER_METHODS), fc.constantFrom("/api/workflows", "/api/runs", "/healthz", "/metrics", "/", "/api/openapi.json", "/readyz")).map(([m, path]): FuzzRequest => ({ method: m, path, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, label: `${m} ${path}` })) },
    // the queue dashboard: its own router under /admin/queues, signed in or not
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PROPFIND", "PATCH"), fc.constantFrom("", "/", "/api/queues", "/api/queues/commands/retry/failed", "/no/such", "/static/x.js", "/api/redis/stats"), fc.oneof(adminAuth, fc.constant(`Basic ${Buffer.from(`u:${ADMIN_TOKEN}`).toString("base64")}`)))
        .filter(([m, sub]) => !(m !== "GET" && m !== "HEAD" && sub.includes("retry")))
        .map(([m, sub, auth]): FuzzRequest => ({ method: m, path: `/admin/queues${sub}`, headers: { authorization: auth }, label: `${m} /admin/queues${sub}` })),
    },
  );
  const deploys = fc.sample(fc.tuple(adminAuth, fc.constantFrom("text/plain", "text/plain", "text/plain", "text/plain", "text/plain; charset=utf-8", "application/json", "", "text/plain; charset=latin1")), { seed: SEED + 2, numRuns: sources.length }).map(
    ([auth, type], i): FuzzRequest => ({ method: "POST", path: "/api/workflows", headers: { authorization: auth, ...(type ? { "content-type": type } : {}) }, body: Buffer.from(sources[i], "utf8"), label: `deploy #${i}` }),
  );
  return { deploys, others: fc.sample(req, { seed: SEED + 3, numRuns: n }) };
}

/** Forged and odd bearer JWTs for the raise path, and a few good ones. */
async function raiseRequests(n: number): Promise<FuzzRequest[]> {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const sign = (claims: Record<string, unknown>, secret: string, alg = "HS256") => new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));
  const now = Math.floor(Date.now() / 1000);
  const forged = [
    `${enc({ alg: "none", typ: "JWT" })}.${enc({ sub: "mallory", roles: ["ops"] })}.`,
    `${enc({ alg: "HS256" })}.${enc({ sub: "mallory", roles: ["ops"] })}.${"A".repeat(43)}`,
    await sign({ sub: "mallory", roles: ["ops"] }, "not-the-secret"),
    await sign({ sub: "mallory", roles: ["ops"] }, JWT_SECRET, "HS512"),
    await sign({ roles: ["ops"] }, JWT_SECRET),
    await sign({ sub: "", roles: ["ops"] }, JWT_SECRET),
    await sign({ sub: 42, roles: "ops" }, JWT_SECRET),
    await sign({ sub: "late", roles: ["ops"], exp: now - 60 }, JWT_SECRET),
    await sign({ sub: "soon", roles: ["ops"], nbf: now + 3600 }, JWT_SECRET),
    "a.b.c",
    "....",
    "x".repeat(5000),
  ];
  const good = [await sign({ sub: "fuzzer", roles: ["anyone"], email: "f@example.test", exp: now + 3600 }, JWT_SECRET), await sign({ sub: "op", roles: ["ops", 7], email: 3, exp: now + 3600 }, JWT_SECRET)];
  const auth = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...forged).map((t) => `Bearer ${t}`) }, { weight: 1, arbitrary: fc.constantFrom(...good).map((t) => `Bearer ${t}`) }, { weight: 1, arbitrary: fc.constantFrom("", "Basic eDp5", "Bearer") });
  const element = fc.oneof(fc.constant(""), fc.constantFrom("?element=0", "?element=-1", "?element=1e3", "?element=x", "?element=0&element=1", "?element=99999999999999999999"));
  return fc
    .sample(fc.tuple(auth, fc.integer({ min: 0, max: 1000 }), fc.constantFrom("answer", "typed", "ping", "close", "nope", "%00"), element, bodySpec), { seed: SEED + 4, numRuns: n })
    .map(([a, i, alias, el, spec], k) => {
      const { headers, body } = encodeBody(spec, k + 1);
      return { method: "POST", path: `/api/runs/${runIds[i % runIds.length]}/slots/${alias}/events${el}`, headers: { ...headers, ...(a ? { authorization: a } : {}) }, body, label: `raise ${alias}${el} ${a.slice(0, 30)} ${spec.text?.slice(0, 60) ?? ""}` };
    });
}

// --- running batches ------------------------------------------------------------------------------

/** Waits until two fingerprints taken 300 ms apart agree (a 202'd command may still be landing). */
async function quiet(): Promise<string> {
  let last = await snapshot(cluster.databaseUrl);
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await snapshot(cluster.databaseUrl);
    if (now === last) return now;
    last = now;
  }
  return last;
}

/**
 * Sends `requests` in batches of BATCH (WIDTH in flight), checking every answer; around each batch
 * whose answers were all refusals (or reads), the database fingerprint must not change. Returns
 * status counts; `onAnswer` sees every request and its answer.
 */
async function runBatches(
  t: ExecutionContext,
  requests: FuzzRequest[],
  onAnswer?: (req: FuzzRequest, res: FuzzAnswer) => void,
  check: (req: FuzzRequest, res: FuzzAnswer) => string[] = checkAnswer,
): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let before = await quiet();
  for (let start = 0; start < requests.length; start += BATCH) {
    const batch = requests.slice(start, start + BATCH);
    const answers = await pool(batch, WIDTH, (req) => send(port, req));
    total += batch.length;
    let accepted = false;
    batch.forEach((req, i) => {
      const res = answers[i];
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      onAnswer?.(req, res);
      if (res.status >= 200 && res.status < 300 && req.method !== "GET" && req.method !== "HEAD") accepted = true;
      const broken = check(req, res).filter((b) => !(res.status === 500 && res.text.includes('"code":"handler-failed"') && b === "status 500"));
      if (res.status <= 0) broken.push(`no answer (${res.text.slice(0, 80)})`);
      if (broken.length) t.fail(`${req.label}\n  → ${res.status} ${res.contentType} ${res.text.slice(0, 300)}\n  broken: ${broken.join("; ")}`);
    });
    const after = accepted ? await quiet() : await snapshot(cluster.databaseUrl);
    if (!accepted) {
      comparedBatches++;
      if (after !== before) t.fail(`a batch of refused requests (${start}…${start + batch.length}) changed rows`);
    }
    before = after;
  }
  return statuses;
}

// --- the suite ------------------------------------------------------------------------------------

test.serial("the callback endpoint: generated tokens, paths, methods, content types, encodings and bodies", async (t) => {
  const statuses = await runBatches(t, callbackRequests(7000));
  t.log(Object.fromEntries(statuses));
  t.true((statuses.get(404) ?? 0) > 0 && (statuses.get(422) ?? 0) > 0 && (statuses.get(415) ?? 0) > 0 && (statuses.get(410) ?? 0) > 0, "the generators reach the refusals");
});

test.serial("raw malformed HTTP over a socket: every answer the server writes is an honest problem", async (t) => {
  const inputs = fc.sample(rawBytes, { seed: SEED + 5, numRuns: 600 });
  const answers = await pool(inputs, WIDTH, (bytes) => sendRaw(port, bytes));
  total += inputs.length;
  let answered = 0;
  answers.forEach((raw, i) => {
    const res = parseRawAnswer(raw);
    if (!res) return;
    answered++;
    const broken = checkAnswer({ method: "GET" }, res);
    if (res.status === -2) broken.push("not an HTTP response");
    if (broken.length) t.fail(`${JSON.stringify(inputs[i].toString("utf8").slice(0, 160))}\n  → ${raw.slice(0, 300)}\n  broken: ${broken.join("; ")}`);
  });
  t.true(answered > inputs.length / 2, `answered ${answered} of ${inputs.length}`);
  t.is((await send(port, { method: "GET", path: "/healthz", headers: {}, label: "healthz" })).status, 200, "still serving");
});

/**
 * Sends `requests` (deploys: answered after their transaction commits) one at a time,
 * fingerprinting the database after each: every refusal must leave it as it was (deploys succeed
 * often enough that batches would rarely be comparable).
 */
async function runOneByOne(t: ExecutionContext, requests: FuzzRequest[]): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let before = await quiet();
  for (const req of requests) {
    const res = await send(port, req);
    total++;
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    const broken = checkAnswer(req, res);
    if (res.status <= 0) broken.push(`no answer (${res.text.slice(0, 80)})`);
    const refused = res.status >= 400;
    // a deploy commits before it answers, so the fingerprint after it is settled
    const after = await snapshot(cluster.databaseUrl);
    if (refused && after !== before) broken.push("a refused request changed rows");
    if (broken.length) t.fail(`${req.label}\n  → ${res.status} ${res.contentType} ${res.text.slice(0, 300)}\n  broken: ${broken.join("; ")}`);
    before = after;
  }
  return statuses;
}

test.serial("the admin API: auth, mutated .flow sources, malformed paths and input", async (t) => {
  const { deploys, others } = adminRequests(1500, mutatedSources(250));
  const deployed = await runOneByOne(t, deploys);
  t.log({ deploys: Object.fromEntries(deployed) });
  t.true((deployed.get(422) ?? 0) > 0, "some mutated sources are refused");
  const statuses = await runBatches(t, others);
  t.log(Object.fromEntries(statuses));
  t.true((statuses.get(401) ?? 0) > 0 && (statuses.get(422) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0);
});

test.serial("the raise path: forged, expired and odd JWTs, odd elements and bodies", async (t) => {
  const statuses = await runBatches(t, await raiseRequests(1500));
  t.log(Object.fromEntries(statuses));
  t.true((statuses.get(401) ?? 0) > 0);
});

/**
 * The v0.4 doors (sign-in, the inbox and its API, task pages, Slack interactions, forwarding, the
 * receipts' key set): odd methods, paths, queries, cookies, bearer tokens, signatures and bodies.
 * Invariants as everywhere (no 5xx but 503, no stack trace, refusals change no row), except that
 * the pages a person's browser opens (`/inbox…`, `/auth/login`) and the forward form's post answer
 * their refusals as HTML pages (text/html), never as a 5xx.
 */
test.serial("the v0.4 doors: /auth/*, /inbox, task pages, /api/inbox, Slack interactions, forward, JWKS — odd methods, paths, cookies, tokens and bodies", async (t) => {
  const runId = fc.oneof(fc.integer({ min: 0, max: 1000 }).map((i) => runIds[i % runIds.length]), fc.uuid(), fc.constantFrom("%00", "x", "..%2F..", "a".repeat(300)));
  const alias = fc.constantFrom("answer", "typed", "nope", "%00", "..", "a".repeat(200));
  const query = fc.constantFrom("", "?element=0", "?element=-1", "?element=x", "?workflow=CbBasic", "?order=deadline", "?order=sideways", "?cursor=x", "?cursor=%00", "?limit=0", "?limit=1000", "?returnTo=//evil.example", "?returnTo=https%3A%2F%2Fevil.example", "?state=x&code=y", "?error=access_denied");
  const path = fc.oneof(
    fc.constantFrom("/auth/login", "/auth/callback", "/auth/logout", "/auth/whoami", "/inbox", "/api/inbox", "/api/slack/interactions", "/.well-known/jwks.json"),
    fc.tuple(runId, alias).map(([r, a]) => `/inbox/tasks/${r}/${a}`),
    fc.integer({ min: 0, max: 1000 }).map((i) => `/api/workflow/callback/${tokens[i % tokens.length]}x/forward`),
    fc.constantFrom("/api/workflow/callback/sfl_nope/forward", "/api/workflow/callback//forward"),
  );
  const cookie = fc.constantFrom("", "slotflow_session=junk", `slotflow_session=${"A".repeat(5000)}`, "slotflow_login=eyJhbGciOiJub25lIn0.e30.", "slotflow_session=a.b.c.d.e");
  const authorization = fc.constantFrom("", "Bearer a.b.c", `Bearer ${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from('{"sub":"x"}').toString("base64url")}.`, "Basic eDp5");
  const slack = fc.constantFrom<Record<string, string>>({}, { "x-slack-signature": "v0=00", "x-slack-request-timestamp": "1531420618" }, { "x-slack-signature": "v0=" + "a".repeat(64), "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)) });
  const body = fc.oneof(
    fc.constant(""),
    fc.constantFrom("payload=%7B%7D", "payload=not-json", "csrf=x&id=mallory&roles=admin", "email=a%40example.test", "email=", '{"email":"a@example.test"}', '{"email": 7}', "ok=true&note=x&csrf=x"),
    fc.string({ unit: "binary", maxLength: 200 }),
  );
  const type = fc.constantFrom("application/x-www-form-urlencoded", "application/json", "text/plain", "");
  const requests = fc.sample(fc.tuple(fc.constantFrom("GET", "GET", "POST", "POST", "HEAD", "PUT", "DELETE", "PATCH"), path, query, cookie, authorization, slack, body, type), { seed: SEED + 9, numRuns: 1500 }).map(
    ([m, p, q, c, a, sl, b, ty]): FuzzRequest => ({
      method: m,
      path: `${p}${q}`,
      headers: { ...(c ? { cookie: c } : {}), ...(a ? { authorization: a } : {}), ...sl, ...(ty && m !== "GET" && m !== "HEAD" ? { "content-type": ty } : {}), origin: cluster.baseUrl },
      ...(m !== "GET" && m !== "HEAD" && b ? { body: Buffer.from(b) } : {}),
      label: `${m} ${p}${q} cookie=${c.slice(0, 30)} auth=${a.slice(0, 20)}`,
    }),
  );
  // browsers' doors: the pages, and the responder page's no-JavaScript forward form (a form post)
  const isPage = (req: FuzzRequest) =>
    /^\/(inbox|auth\/(login|callback|logout))/.test(req.path) || (req.path.includes("/forward") && req.headers["content-type"] !== "application/json");
  const check = (req: FuzzRequest, res: FuzzAnswer): string[] =>
    isPage(req) && /^text\/html/.test(res.contentType) ? checkAnswer(req, { ...res, status: res.status >= 400 && res.status !== 503 ? 399 : res.status }).concat(res.status >= 500 && res.status !== 503 ? [`status ${res.status}`] : []) : checkAnswer(req, res);
  const statuses = await runBatches(t, requests, undefined, check);
  t.log(Object.fromEntries(statuses));
  t.true((statuses.get(401) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0, "the doors refused what they should");
});

/**
 * Issue 16: deep, wide, long-keyed and huge-numbered JSON at every JSON entry point — the callback
 * endpoint, the responder page's POST (its script's headers), the raise path (a valid JWT), run
 * start, link revoke, deploy, endpoint PUT and run cancel (admin) — each over identity, chunked
 * and gzip bodies. No 5xx but 503; refusals change nothing (runBatches).
 */
test.serial("deep (to 100,000), wide, long-keyed and huge JSON at every JSON entry point, over identity, chunked and gzip bodies", async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const jwt = await new SignJWT({ roles: ["ops", "anyone"], email: "f@example.test" }).setSubject("fuzzer").setExpirationTime(now + 3600).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(JWT_SECRET));
  const entries = ["callback", "page", "raise", "start", "revoke", "deploy", "endpoint", "cancel"] as const;
  const requests = fc
    .sample(
      fc.constantFrom(...entries).chain((entry) => fc.tuple(fc.constant(entry), fc.constantFrom("identity", "chunked", "gzip"), hugeJsonFor(entry), fc.nat())),
      { seed: SEED + 6, numRuns: 1200 },
    )
    .map(([entry, framing, text, i]): FuzzRequest => {
      const headers: Record<string, string> = { "content-type": entry === "deploy" ? "text/plain" : "application/json" };
      let body = Buffer.from(text, "utf8");
      if (framing === "gzip") {
        body = gzipSync(body);
        headers["content-encoding"] = "gzip";
      }
      const run = runIds[i % runIds.length];
      let path: string;
      let method = "POST";
      switch (entry) {
        case "callback":
          path = `/api/workflow/callback/${tokens[i % tokens.length]}`;
          break;
        case "page":
          path = `/api/workflow/callback/${tokens[i % tokens.length]}`;
          Object.assign(headers, { accept: "application/json", "idempotency-key": `page-${i}` });
          break;
        case "raise":
          path = `/api/runs/${run}/slots/${["answer", "typed", "ping"][i % 3]}/events`;
          headers.authorization = `Bearer ${jwt}`;
          break;
        case "start":
          path = "/api/workflows/CbBasic/runs";
          headers.authorization = `Bearer ${ADMIN_TOKEN}`;
          break;
        case "revoke":
          path = `/api/runs/${run}/slots/nope/link/revoke`;
          headers.authorization = `Bearer ${ADMIN_TOKEN}`;
          break;
        case "deploy":
          path = "/api/workflows";
          headers.authorization = `Bearer ${ADMIN_TOKEN}`;
          break;
        case "endpoint":
          method = "PUT";
          // a few names, so concurrent PUTs create and update the same endpoint
          path = `/api/endpoints/fuzz-hook-${i % 3}`;
          headers.authorization = `Bearer ${ADMIN_TOKEN}`;
          break;
        case "cancel":
          path = `/api/runs/${i % 7 === 0 ? "not-a-uuid" : run}/cancel`;
          headers.authorization = `Bearer ${ADMIN_TOKEN}`;
          break;
      }
      return { method, path, headers, body, chunked: framing !== "identity", label: `${entry} ${framing} ${text.length} chars ${text.slice(0, 60)}` };
    });
  const byEntry = new Map<string, Map<number, number>>();
  const statuses = await runBatches(t, requests, (req, res) => {
    const entry = req.label.split(" ")[0];
    const counts = byEntry.get(entry) ?? new Map<number, number>();
    counts.set(res.status, (counts.get(res.status) ?? 0) + 1);
    byEntry.set(entry, counts);
    if (entry === "endpoint" && res.status < 300) {
      const secret = (JSON.parse(res.text) as { secret?: unknown }).secret;
      if (typeof secret === "string") endpointSecrets.push(secret);
    }
  });
  t.log(Object.fromEntries(statuses));
  t.log(Object.fromEntries([...byEntry].map(([entry, counts]) => [entry, Object.fromEntries(counts)])));
  // revoke reads no body (its answer is the unknown slot's 404); every other entry parses JSON
  for (const entry of entries.filter((e) => e !== "revoke")) t.true((byEntry.get(entry)?.get(422) ?? 0) > 0, `${entry}: the generators reach a 422`);
  t.true((byEntry.get("endpoint")?.get(201) ?? 0) > 0 && endpointSecrets.length > 0, "some endpoint PUTs are accepted and answer a secret");
  t.true((statuses.get(422) ?? 0) > 0 && (statuses.get(413) ?? 0) > 0, "the generators reach the depth and size limits");
  t.false([...statuses.keys()].some((s) => s >= 500 && s !== 503), "no 5xx but 503");
});

test.serial("at least 10,000 requests were sent, most batches were compared, and no token or secret is in a log line, in Redis or in a pg_dump", async (t) => {
  t.log({ requests: total, comparedBatches, tokens: tokens.length });
  t.true(total >= 10_000, `requests sent: ${total}`);
  t.true(comparedBatches >= 10, `batches compared: ${comparedBatches}`);
  t.true(tokens.length >= RUNS * 3);
  // the links' tokens, the endpoints' signing secrets and URL (a chat-webhook URL is a
  // credential, sealed at rest); and, in log lines, the admin token and the JWT secret
  const secrets = [...tokens, ...endpointSecrets, ENDPOINT_URL];
  const leaks = (where: string, text: string, extra: string[] = []) => [...secrets, ...extra].filter((tok) => text.includes(tok)).map((tok) => `${where}: ${tok.slice(0, 6)}…`);
  const found: string[] = [];
  for (const line of cluster.output().filter((l) => l.startsWith("{"))) found.push(...leaks("log", line, [ADMIN_TOKEN, JWT_SECRET]));
  for (const entry of await redisText(cluster.env.REDIS_URL!, cluster.env.SLOTFLOW_QUEUE_PREFIX!)) found.push(...leaks("redis", entry));
  const dump = pgDump(cluster.databaseUrl);
  t.true(dump.includes(runIds[0]));
  t.true(dump.includes("fuzz-hook-"), "the endpoints the fuzz suite set are in the dump");
  found.push(...leaks("pg_dump", dump));
  t.deepEqual(found.slice(0, 20), []);
});
