/**
 * Endpoints of kind `http` (v0.5, issue 40 item 2; interfaces.md "Calls"), over real HTTP against a
 * real `slotflow serve`: the signing secret is returned once; header values are credentials,
 * sealed at rest and never shown again (the list shows names only); rotate and DELETE as for
 * webhooks; bad headers refused with 422 naming the header, nothing changed.
 */
import test from "ava";
import { dropDatabase, sql } from "../helpers/db.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
const api = (method: string, path: string, json?: unknown) => request(cluster.baseUrl, method, path, { token: ADMIN_TOKEN, json });
const CREDENTIAL = "Bearer sk_live_credentialXYZ123";

test.before(async () => {
  cluster = await startCluster("http-endpoints", { env: { SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1" } });
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

test.serial("PUT an http endpoint: 201 with its secret once and the header names; the list shows names only; values sealed at rest", async (t) => {
  const put = await api("PUT", "/api/endpoints/credit-bureau", { kind: "http", url: "https://api.example.com/v1", headers: { Authorization: CREDENTIAL, "X-Tenant": "acme" } });
  t.is(put.status, 201, put.text);
  t.like(put.body, { name: "credit-bureau", kind: "http", url: "https://api.example.com/v1" });
  t.deepEqual(put.body.headers, ["Authorization", "X-Tenant"]);
  t.regex(put.body.secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
  t.false(put.text.includes(CREDENTIAL));

  const list = await api("GET", "/api/endpoints");
  t.is(list.status, 200);
  const shown = list.body.find((e: { name: string }) => e.name === "credit-bureau");
  t.like(shown, { kind: "http", host: "api.example.com", headers: ["Authorization", "X-Tenant"] });
  t.false(list.text.includes(CREDENTIAL));
  t.false(list.text.includes(put.body.secret));
  t.false(list.text.includes("acme"));

  const [row] = await sql(cluster.databaseUrl, "SELECT * FROM endpoints WHERE name = 'credit-bureau'");
  const stored = JSON.stringify(row);
  t.false(stored.includes("sk_live_credentialXYZ123"));
  t.false(stored.includes("acme"));
  t.false(stored.includes(put.body.secret));
  t.true(String(row.headers).includes("$sealed"));
  t.deepEqual(row.header_names, ["Authorization", "X-Tenant"]);

  // an update keeps the secret (not shown again) and replaces the headers
  const again = await api("PUT", "/api/endpoints/credit-bureau", { kind: "http", url: "https://api.example.com/v2", headers: { Authorization: "Bearer other" } });
  t.is(again.status, 200, again.text);
  t.is(again.body.secret, undefined);
  t.deepEqual(again.body.headers, ["Authorization"]);
  const [after] = await sql(cluster.databaseUrl, "SELECT secret, header_names FROM endpoints WHERE name = 'credit-bureau'");
  t.is(after.secret, row.secret);
  t.deepEqual(after.header_names, ["Authorization"]);
});

test.serial("rotate gives an http endpoint a new secret once; DELETE removes it (204, then 404)", async (t) => {
  const put = await api("PUT", "/api/endpoints/scorer", { kind: "http", url: "https://scorer.example.com" });
  t.is(put.status, 201, put.text);
  t.deepEqual(put.body.headers, []);
  const rotated = await api("POST", "/api/endpoints/scorer/rotate");
  t.is(rotated.status, 200, rotated.text);
  t.regex(rotated.body.secret, /^whsec_/);
  t.not(rotated.body.secret, put.body.secret);
  const [row] = await sql(cluster.databaseUrl, "SELECT previous_secret_until FROM endpoints WHERE name = 'scorer'");
  t.truthy(row.previous_secret_until);
  t.is((await api("DELETE", "/api/endpoints/scorer")).status, 204);
  t.is((await api("DELETE", "/api/endpoints/scorer")).status, 404);
  t.is((await api("POST", "/api/endpoints/scorer/rotate")).status, 404);
});

test.serial("bad http endpoints are refused with 422 naming what is wrong, and nothing is stored", async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ kind: "http", url: "https://a.example", headers: { "Bad Name": "x" } }, /"Bad Name" is not an HTTP header name/],
    [{ kind: "http", url: "https://a.example", headers: { "X-A": "line\r\nX-Injected: 1" } }, /"X-A"'s value holds a line break/],
    [{ kind: "http", url: "https://a.example", headers: { "Idempotency-Key": "k" } }, /"Idempotency-Key" is set by slotflow/],
    [{ kind: "http", url: "https://a.example", headers: { "webhook-signature": "v1,x" } }, /"webhook-signature" is set by slotflow/],
    [{ kind: "http", url: "https://a.example", headers: { Host: "internal" } }, /"Host" is set by slotflow/],
    [{ kind: "http", url: "https://a.example", headers: { "X-A": 1 } }, /"X-A" must have a string value/],
    [{ kind: "http", url: "https://a.example", headers: { "x-a": "1", "X-A": "2" } }, /given twice/],
    [{ kind: "http", url: "https://a.example", headers: ["Authorization"] }, /"headers" must be an object/],
    [{ kind: "webhook", url: "https://a.example", headers: { A: "b" } }, /"headers" is for endpoints of kind "http" only/],
    [{ kind: "http", url: "https://a.example/v1?key=secret" }, /must not have a query/],
    [{ kind: "http", url: "https://user:pw@a.example/v1" }, /user name or password/],
    [{ kind: "ftp", url: "https://a.example" }, /"kind" must be/],
  ];
  for (const [body, detail] of cases) {
    const res = await api("PUT", "/api/endpoints/refused", body);
    t.is(res.status, 422, JSON.stringify(body));
    t.regex(res.body.detail, detail);
    t.false(res.text.includes("line\r\n"));
  }
  t.is((await sql(cluster.databaseUrl, "SELECT name FROM endpoints WHERE name = 'refused'")).length, 0);
});
