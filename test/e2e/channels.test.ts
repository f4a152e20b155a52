/**
 * Links through other channels (issue 18), over real HTTP: one real `slotflow serve` on real
 * PostgreSQL and Redis, delivering to a real receiver on 127.0.0.1 (so the run sets
 * SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1; the refusal itself is tested in test/engine/deliveries.test.ts)
 * with a short retry schedule (SLOTFLOW_DELIVERY_RETRY_MS). Signatures are verified by the npm
 * `standardwebhooks` library, not by slotflow's code.
 *
 * Rows: endpoints API and CLI shapes (secret once, GET shows the host only, credentials sealed);
 * deploy warning for an unknown endpoint and the failed delivery at run time; Standard Webhooks
 * body and headers; Slack Block Kit and Teams Adaptive Card; retries (same webhook-id, Retry-After);
 * retries stop once the link is not live; redelivery and its 409; rotation (both signatures);
 * 410 and 5 days of failures disable the endpoint; unfurler GETs leave the link live; no token,
 * secret or chat URL in logs, Redis, rows, API answers or metrics.
 * Fixture: test/fixtures/channels.flow.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { dropDatabase, sql } from "../helpers/db.js";
import { postLink, startRun, uniqueTitle } from "../helpers/callback.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { redisText } from "../helpers/redis-text.js";
import { ADMIN_TOKEN, eventually, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

const run = promisify(execFile);

let cluster: Cluster;
let base: string;
let rx: Receiver;
let deployWarnings: { code: string; message: string; line: number }[] = [];
/** The portal's signing secret (changes on rotation); every secret ever issued, for the leak check. */
let portalSecret = "";
const secrets: string[] = [];
/** Every link any receiver was sent, for the leak check. */
const links = new Set<string>();
const CHAT_SECRET_PATH = "T0000/B0000/XXXXchatsecretpathXXXX";

const api = (method: string, path: string, json?: unknown) => request(base, method, path, { token: ADMIN_TOKEN, json });
const putEndpoint = (name: string, kind: string, url: string) => api("PUT", `/api/endpoints/${name}`, { kind, url });

test.before(async () => {
  rx = await startReceiver();
  cluster = await startCluster("channels", { env: { SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1", SLOTFLOW_DELIVERY_RETRY_MS: "0,300,300,300,300,300" } });
  base = cluster.baseUrl;
  const { readFileSync } = await import("node:fs");
  const source = readFileSync(`${ROOT}/test/fixtures/channels.flow`, "utf8");
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  if (deployed.status !== 201) throw new Error(deployed.text);
  deployWarnings = deployed.body.warnings;
  const portal = await putEndpoint("portal", "webhook", `${rx.url}/portal`);
  if (portal.status !== 201) throw new Error(portal.text);
  portalSecret = portal.body.secret;
  secrets.push(portalSecret);
  for (const [name, kind] of [["finance-slack", "slack"], ["finance-teams", "teams"]]) {
    const res = await putEndpoint(name, kind, `${rx.url}/${kind}/${CHAT_SECRET_PATH}`);
    if (res.status !== 201) throw new Error(res.text);
  }
});

test.after.always(async () => {
  await cluster?.stop();
  await rx?.close();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

interface DeliveryEntry {
  id: string;
  channel: string;
  endpoint: string;
  webhookId: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  endReason: string | null;
  nextAttemptAt: string | null;
  attemptLog: { attempt: number; statusCode: number | null; latencyMs: number | null; error: string | null }[];
}

async function deliveries(runId: string): Promise<DeliveryEntry[]> {
  const res = await api("GET", `/api/runs/${runId}/outbox`);
  return (res.body as { channel?: string }[]).filter((m) => m.channel !== undefined) as DeliveryEntry[];
}

/** Starts a run of the fixture in `mode`; returns its id and title. */
async function start(mode: string) {
  const title = uniqueTitle(mode);
  const runId = await startRun(base, "Channels", { job: { title, mode } });
  return { runId, title };
}

const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, any> };

// --- 1. endpoints ----------------------------------------------------------------------------------

test.serial("PUT creates an endpoint (201, a webhook's whsec_ secret once), updates it (200, no secret); GET shows the host only", async (t) => {
  t.regex(portalSecret, /^whsec_[A-Za-z0-9+/]+=*$/);
  const again = await putEndpoint("portal", "webhook", `${rx.url}/portal`);
  t.is(again.status, 200, again.text);
  t.false("secret" in again.body, "an update never shows the secret again");
  const list = await api("GET", "/api/endpoints");
  t.is(list.status, 200);
  const host = new URL(rx.url).host;
  t.deepEqual(
    list.body.map((e: any) => [e.name, e.kind, e.host, e.failingSince, e.disabledAt]),
    [["finance-slack", "slack", host, null, null], ["finance-teams", "teams", host, null, null], ["portal", "webhook", host, null, null]],
  );
  t.true(list.body.every((e: any) => typeof e.createdAt === "string" && !("url" in e) && !("secret" in e)));
  t.false(list.text.includes(CHAT_SECRET_PATH));
  t.false(list.text.includes("whsec_"));
  // sealed at rest: neither the chat URL nor the secret is in the table in clear
  const rows = JSON.stringify(await sql(cluster.databaseUrl, "SELECT * FROM endpoints"));
  t.false(rows.includes(CHAT_SECRET_PATH));
  t.false(rows.includes(portalSecret.slice(6)));
  t.true(rows.includes("$sealed"));
});

test.serial("endpoint input errors: 422 for a bad kind or URL, 404 for an unknown endpoint, 409 rotating a chat endpoint; DELETE 204", async (t) => {
  t.is((await putEndpoint("x1", "sms", `${rx.url}/x`)).status, 422);
  t.is((await putEndpoint("x1", "webhook", "ftp://example.com/x")).status, 422);
  t.is((await putEndpoint("x1", "webhook", "not a url")).status, 422);
  t.is((await api("PUT", "/api/endpoints/x1", { kind: "webhook", url: `${rx.url}/x`, extra: 1 })).status, 422);
  t.is((await api("POST", "/api/endpoints/nope/rotate")).status, 404);
  const rotateChat = await api("POST", "/api/endpoints/finance-slack/rotate");
  t.is(rotateChat.status, 409);
  t.is(rotateChat.body.code, "not-a-webhook");
  t.is((await putEndpoint("temp", "teams", `${rx.url}/t`)).status, 201);
  t.is((await api("DELETE", "/api/endpoints/temp")).status, 204);
  t.is((await api("DELETE", "/api/endpoints/temp")).status, 404);
  t.is((await request(base, "GET", "/api/endpoints")).status, 401, "admin only");
  const patch = await api("PATCH", "/api/endpoints/portal", {});
  t.is(patch.status, 405);
  const doc = (await request(base, "GET", "/api/openapi.json")).body;
  t.truthy(doc.paths["/api/endpoints/{name}"].put.responses["201"]);
  t.truthy(doc.paths["/api/endpoints/{name}/rotate"].post.responses["409"]);
  t.truthy(doc.paths["/api/runs/{id}/outbox/{messageId}/redeliver"].post.responses["409"]);
  t.truthy(doc.paths["/api/endpoints"].get);
});

/**
 * Issue 16 (found extending the fuzz suite to `PUT /api/endpoints/{name}`): concurrent PUTs that
 * create the same new endpoint all succeed — one 201 with the secret, the others 200 updates —
 * none answers 500 (a unique violation of the losing inserts).
 */
test.serial("concurrent PUTs creating the same endpoint: one 201 (with its secret), the others 200; never a 5xx", async (t) => {
  for (const [round, kind] of [[1, "webhook"], [2, "slack"], [3, "webhook"]] as const) {
    const name = `race-${round}`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => putEndpoint(name, kind, `${rx.url}/race/${round}`)));
    t.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 200, 200, 200, 200, 200, 200, 201],
      answers.map((a) => `${a.status} ${a.text.slice(0, 200)}`).join("\n"),
    );
    const created = answers.find((a) => a.status === 201)!;
    if (kind === "webhook") t.regex(created.body.secret, /^whsec_/);
    t.true(answers.filter((a) => a.status === 200).every((a) => !("secret" in a.body)), "only the creating call shows a secret");
    t.is((await api("DELETE", `/api/endpoints/${name}`)).status, 204);
  }
});

test.serial("the CLI: endpoint set | list | rotate | rm", async (t) => {
  const env = { ...cluster.env, BASE_URL: base };
  const cli = (...args: string[]) => run(process.execPath, [...cliEntry(), "endpoint", ...args], { cwd: ROOT, env });
  const set = JSON.parse((await cli("set", "cli-hook", "--kind", "webhook", "--url", `${rx.url}/cli`)).stdout);
  t.is(set.name, "cli-hook");
  t.regex(set.secret, /^whsec_/);
  secrets.push(set.secret);
  const list = (await cli("list")).stdout;
  t.true(list.includes("cli-hook"));
  t.false(list.includes("/cli"), "list shows the host, not the URL");
  const rotated = JSON.parse((await cli("rotate", "cli-hook")).stdout);
  t.regex(rotated.secret, /^whsec_/);
  t.not(rotated.secret, set.secret);
  secrets.push(rotated.secret);
  t.regex((await cli("rm", "cli-hook")).stdout, /removed cli-hook/);

  // kind http with --header (issue 40 item 2): the headers are sealed, listed by name only
  const http = JSON.parse((await cli("set", "cli-call", "--kind", "http", "--url", `${rx.url}/call`, "--header", "Authorization=Bearer cli-credential-1", "--header", "X-Tenant=t=1")).stdout);
  t.is(http.kind, "http");
  t.deepEqual([...http.headers].sort(), ["Authorization", "X-Tenant"]);
  t.false(JSON.stringify(http).includes("cli-credential-1"), "the header's value is never shown");
  t.false((await cli("list")).stdout.includes("cli-credential-1"));
  const bad = await cli("set", "cli-call", "--kind", "http", "--url", `${rx.url}/call`, "--header", "Bearer cli-credential-2").catch((e: { code: number; stderr: string }) => e);
  t.is((bad as { code: number }).code, 2);
  t.regex((bad as { stderr: string }).stderr, /--header takes NAME=VALUE/);
  t.false((bad as { stderr: string }).stderr.includes("cli-credential-2"), "the refused option is not echoed");
  t.regex((await cli("rm", "cli-call")).stdout, /removed cli-call/);
});

test.serial("a deploy naming an endpoint that does not exist warns (FLOW330); at run time that delivery is recorded failed with the reason", async (t) => {
  t.deepEqual([...new Set(deployWarnings.filter((w) => w.code === "FLOW330").map((w) => w.message.match(/"([^"]+)"/)![1]))].sort(), [
    "finance-slack", "finance-teams", "nowhere", "portal",
  ]);
  const { runId } = await start("missing");
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds.length === 1 && ds[0].status === "failed" ? ds : null;
  });
  t.is(d.endpoint, "nowhere");
  t.regex(d.endReason!, /no endpoint named "nowhere"/);
});

// --- 2. wire formats ---------------------------------------------------------------------------------

test.serial("send webhook: Standard Webhooks 1.0 body and headers, verified by the standardwebhooks library; the outbox shows the attempt, never the body", async (t) => {
  const before = rx.at("/portal").length;
  const { runId, title } = await start("webhook");
  const got = await eventually(async () => rx.at("/portal").length > before && rx.at("/portal")[before]);
  const event = verify(portalSecret, got);
  t.is(event.type, "job.answer.requested");
  t.is(event.data.title, title);
  t.deepEqual(event.data.job, { title, mode: "webhook", answerUrl: event.data.url });
  t.true(event.data.url.startsWith(`${base}/api/workflow/callback/sfl_`));
  links.add(event.data.url);
  t.deepEqual(Object.keys(JSON.parse(got.body)), ["type", "timestamp", "data"]);
  t.regex(String(got.headers["webhook-id"]), /^msg_[0-9a-f]{32}$/);
  t.regex(String(got.headers["webhook-timestamp"]), /^\d{10}$/);
  t.regex(String(got.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]+=*$/);
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds[0]?.status === "sent" ? ds : null;
  });
  t.is(d.channel, "webhook");
  t.is(d.endpoint, "portal");
  t.is(d.webhookId, String(got.headers["webhook-id"]));
  t.is(d.attempts, 1);
  t.is(d.lastStatusCode, 200);
  t.is(typeof d.lastLatencyMs, "number");
  t.deepEqual(d.attemptLog.map((a) => [a.attempt, a.statusCode]), [[1, 200]]);
  const outbox = await api("GET", `/api/runs/${runId}/outbox`);
  t.false(outbox.text.includes(new URL(event.data.url).pathname), "never the link");
  t.false(outbox.text.includes(title), "never the body");
});

test.serial("send message: Slack Block Kit (link as a button, unfurl off, text escaped) and a Teams Adaptive Card with Action.OpenUrl", async (t) => {
  const slackPath = `/slack/${CHAT_SECRET_PATH}`;
  const teamsPath = `/teams/${CHAT_SECRET_PATH}`;
  const [s0, t0] = [rx.at(slackPath).length, rx.at(teamsPath).length];
  const { title } = await start("chat");
  const slack = JSON.parse((await eventually(async () => rx.at(slackPath)[s0])).body);
  const teams = JSON.parse((await eventually(async () => rx.at(teamsPath)[t0])).body);
  t.false(slack.unfurl_links);
  t.false(slack.unfurl_media);
  t.is(slack.blocks[0].type, "section");
  t.is(slack.blocks[0].text.text, `Answer &lt;${title}&gt;?`);
  const button = slack.blocks[1].elements[0];
  t.is(button.type, "button");
  t.is(button.text.text, "Open to answer");
  t.true(button.url.startsWith(`${base}/api/workflow/callback/sfl_`));
  links.add(button.url);
  t.is(teams.type, "message");
  const card = teams.attachments[0];
  t.is(card.contentType, "application/vnd.microsoft.card.adaptive");
  t.is(card.content.type, "AdaptiveCard");
  t.is(card.content.body[0].text, `Answer ${title}?`);
  t.deepEqual(card.content.actions, [{ type: "Action.OpenUrl", title: "Open", url: button.url }]);
  t.is(rx.at(slackPath)[s0].headers["webhook-signature"], undefined, "chat webhooks are not signed");

  // 7. scanner-safe: the GETs Slack's and Teams' unfurlers send leave the link live
  const agents = [
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Slackbot 1.0 (+https://api.slack.com/robots)",
    "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Teams/1.6",
  ];
  const path = new URL(button.url).pathname;
  for (const ua of agents) {
    for (const accept of ["text/html,application/xhtml+xml,*/*;q=0.8", undefined]) {
      const res = await request(base, "GET", path, { headers: { "user-agent": ua, ...(accept ? { accept } : {}) } });
      t.true(res.status === 200 || res.status === 405, `${ua} ${accept}: ${res.status}`);
      await request(base, "HEAD", path, { headers: { "user-agent": ua } });
    }
  }
  const answered = await postLink(button.url, { ok: true });
  t.is(answered.status, 200, "the link was still live after every unfurler fetch");
});

// --- 3. delivery that knows the link --------------------------------------------------------------------

test.serial("retries: a failed attempt is retried with the same webhook-id and a new timestamp; Retry-After on 503 is honoured; only 2xx is success", async (t) => {
  await putEndpoint("portal", "webhook", `${rx.url}/portal-retry`);
  rx.reply("/portal-retry", (n): { status: number; headers?: Record<string, string> } => (n === 1 ? { status: 500 } : n === 2 ? { status: 503, headers: { "retry-after": "2" } } : n === 3 ? { status: 302, headers: { location: `${rx.url}/portal` } } : { status: 204 }));
  const { runId } = await start("webhook");
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds[0]?.status === "sent" ? ds : null;
  }, 20_000);
  const got = rx.at("/portal-retry");
  t.is(got.length, 4);
  t.is(rx.at("/portal").filter((r) => r.headers["webhook-id"] === d.webhookId).length, 0, "the redirect was not followed");
  t.true(got.every((r) => r.headers["webhook-id"] === d.webhookId));
  for (const r of got) verify(portalSecret, r);
  t.true(got[2].at - got[1].at >= 1900, `Retry-After: 2 waited ${got[2].at - got[1].at} ms`);
  t.deepEqual(d.attemptLog.map((a) => a.statusCode), [500, 503, 302, 204]);
  t.is(d.attempts, 4);
  for (const r of got) links.add(verify(portalSecret, r).data.url);
});

test.serial("a send message whose link is no longer live stops being retried, and says why; its redelivery is 409", async (t) => {
  await putEndpoint("portal", "webhook", `${rx.url}/portal-down`);
  rx.reply("/portal-down", { status: 500 });
  const { runId } = await start("portal-message");
  const first = await eventually(async () => rx.at("/portal-down")[0]);
  const url = verify(portalSecret, first).data.link as string;
  links.add(url);
  t.is((await postLink(url, { ok: true })).status, 200);
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds[0]?.status === "failed" ? ds : null;
  });
  t.is(d.channel, "message");
  t.regex(d.endReason!, /link burned/);
  const seen = rx.at("/portal-down").length;
  await new Promise((r) => setTimeout(r, 1500));
  t.is(rx.at("/portal-down").length, seen, "no attempt after the link was burned");
  const again = await api("POST", `/api/runs/${runId}/outbox/${d.id}/redeliver`);
  t.is(again.status, 409);
  t.is(again.body.code, "link-not-live");
});

test.serial("a send webhook is data (issue 38): retried after its link is burned until delivered, and redelivered after that", async (t) => {
  await putEndpoint("portal", "webhook", `${rx.url}/portal-later`);
  let down = true;
  // while down, each attempt asks for 2 s (Retry-After): the schedule's attempts outlast the burn below
  rx.reply("/portal-later", () => (down ? { status: 503, headers: { "retry-after": "2" } } : { status: 204 }));
  const { runId } = await start("webhook");
  const first = await eventually(async () => rx.at("/portal-later")[0]);
  const url = verify(portalSecret, first).data.url as string;
  links.add(url);
  t.is((await postLink(url, { ok: true })).status, 200, "the link is burned");
  const seen = rx.at("/portal-later").length;
  down = false;
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds[0]?.status === "sent" ? ds : null;
  }, 20_000);
  t.is(d.endReason, null);
  const after = rx.at("/portal-later");
  t.true(after.length > seen, "attempted again after the burn");
  t.is(after.at(-1)!.headers["webhook-id"], first.headers["webhook-id"]);
  t.is(verify(portalSecret, after.at(-1)! as never).data.url, url);
  const again = await api("POST", `/api/runs/${runId}/outbox/${d.id}/redeliver`);
  t.is(again.status, 202, again.text);
  await eventually(async () => rx.at("/portal-later").length > after.length);
  t.is(rx.at("/portal-later").at(-1)!.headers["webhook-id"], first.headers["webhook-id"]);
});

test.serial("redeliver resends the same message with the same webhook-id while its link is live; a send message 409 once it is not; 404 for another message", async (t) => {
  await putEndpoint("portal", "webhook", `${rx.url}/portal-redeliver`);
  const { runId } = await start("portal-message");
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds[0]?.status === "sent" ? ds : null;
  });
  const res = await api("POST", `/api/runs/${runId}/outbox/${d.id}/redeliver`);
  t.is(res.status, 202, res.text);
  const [a, b] = await eventually(async () => (rx.at("/portal-redeliver").length >= 2 ? rx.at("/portal-redeliver") : null));
  t.is(a.headers["webhook-id"], b.headers["webhook-id"]);
  const [ea, eb] = [verify(portalSecret, a as never), verify(portalSecret, b as never)];
  t.deepEqual(ea.data, eb.data, "the same sealed message");
  links.add(ea.data.link);
  await eventually(async () => (await deliveries(runId))[0].status === "sent");
  t.is((await postLink(ea.data.link, { ok: true })).status, 200);
  const refused = await api("POST", `/api/runs/${runId}/outbox/${d.id}/redeliver`);
  t.is(refused.status, 409);
  t.is(refused.body.code, "link-not-live");
  t.is(rx.at("/portal-redeliver").length, 2);
  t.is((await api("POST", `/api/runs/${runId}/outbox/00000000-0000-4000-8000-000000000000/redeliver`)).status, 404);
});

test.serial("rotation: for 24 h deliveries carry both signatures; the standardwebhooks library verifies with the old and with the new secret", async (t) => {
  const rotated = await api("POST", "/api/endpoints/portal/rotate");
  t.is(rotated.status, 200);
  const [oldSecret, newSecret] = [portalSecret, rotated.body.secret as string];
  t.not(newSecret, oldSecret);
  secrets.push(newSecret);
  portalSecret = newSecret;
  await putEndpoint("portal", "webhook", `${rx.url}/portal-rotate`);
  await start("webhook");
  const got = await eventually(async () => rx.at("/portal-rotate")[0]);
  t.is(String(got.headers["webhook-signature"]).split(" ").length, 2);
  t.is(verify(oldSecret, got).type, "job.answer.requested");
  t.is(verify(newSecret, got).type, "job.answer.requested");
  t.throws(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, got));
  links.add(verify(newSecret, got).data.url);
});

test.serial("410 Gone disables the endpoint (GET says so) and later deliveries fail without a request; PUT re-enables it", async (t) => {
  await putEndpoint("portal", "webhook", `${rx.url}/portal-gone`);
  rx.reply("/portal-gone", { status: 410 });
  const first = await start("webhook");
  await eventually(async () => (await deliveries(first.runId))[0]?.status === "failed");
  const ep = (await api("GET", "/api/endpoints")).body.find((e: any) => e.name === "portal");
  t.truthy(ep.disabledAt);
  t.regex(ep.disabledReason, /410/);
  const second = await start("webhook");
  const [d] = await eventually(async () => {
    const ds = await deliveries(second.runId);
    return ds[0]?.status === "failed" ? ds : null;
  });
  t.regex(d.endReason!, /endpoint disabled/);
  t.is(rx.at("/portal-gone").length, 1);
  for (const r of rx.at("/portal-gone")) links.add(verify(portalSecret, r).data.url);
  await putEndpoint("portal", "webhook", `${rx.url}/portal`);
  t.is((await api("GET", "/api/endpoints")).body.find((e: any) => e.name === "portal").disabledAt, null);
});

test.serial("an endpoint failing for 5 days is disabled", async (t) => {
  await putEndpoint("portal", "webhook", `${rx.url}/portal-failing`);
  rx.reply("/portal-failing", { status: 500 });
  await sql(cluster.databaseUrl, "UPDATE endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE name = 'portal'");
  const { runId } = await start("webhook");
  const [d] = await eventually(async () => {
    const ds = await deliveries(runId);
    return ds[0]?.status === "failed" ? ds : null;
  });
  t.regex(d.endReason!, /failing for 5 days/);
  const ep = (await api("GET", "/api/endpoints")).body.find((e: any) => e.name === "portal");
  t.regex(ep.disabledReason, /5 days/);
  t.truthy(ep.failingSince);
  for (const r of rx.at("/portal-failing")) links.add(verify(portalSecret, r).data.url);
  await putEndpoint("portal", "webhook", `${rx.url}/portal`);
});

// --- 5. never leaking ------------------------------------------------------------------------------------

test.serial("no token, secret or chat-webhook URL in a log line, metric, Redis, a row, or an API answer; metrics count deliveries by kind and outcome", async (t) => {
  t.true(links.size >= 5);
  const tokens = [...links].map((l) => l.split("/").pop()!);
  const needles = [...tokens, ...secrets, ...secrets.map((s) => s.slice(6)), CHAT_SECRET_PATH];
  const leaks = (where: string, text: string) => needles.filter((n) => text.includes(n)).map((n) => `${where}: ${n.slice(0, 12)}…`);
  const found: string[] = [];
  found.push(...leaks("logs", cluster.output().join("\n")));
  found.push(...leaks("redis", (await redisText(cluster.env.REDIS_URL!, `${cluster.env.SLOTFLOW_QUEUE_PREFIX}:`)).join("\n")));
  for (const table of ["endpoints", "deliveries", "delivery_attempts", "history", "runs", "entity_rows", "incidents"]) {
    found.push(...leaks(table, JSON.stringify(await sql(cluster.databaseUrl, `SELECT * FROM ${table}`))));
  }
  const metrics = await request(base, "GET", "/metrics");
  found.push(...leaks("metrics", metrics.text));
  found.push(...leaks("GET /api/endpoints", (await api("GET", "/api/endpoints")).text));
  t.deepEqual(found, []);
  t.regex(metrics.text, /slotflow_delivery_attempts_total\{kind="webhook",outcome="sent"\} [1-9]/);
  t.regex(metrics.text, /slotflow_delivery_attempts_total\{kind="slack",outcome="sent"\} [1-9]/);
  t.regex(metrics.text, /slotflow_delivery_attempts_total\{kind="webhook",outcome="retry"\} [1-9]/);
  t.regex(metrics.text, /slotflow_delivery_retry_backlog \d+/);
  t.regex(metrics.text, /slotflow_deliveries\{status="failed"\} [1-9]/);
  const logLines = cluster.output().filter((l) => l.includes('"delivery sent"'));
  t.true(logLines.length > 0);
  const line = JSON.parse(logLines[0]);
  t.true(["deliveryId", "endpoint", "kind", "attempt", "statusCode", "latencyMs"].every((k) => k in line), logLines[0]);
});
