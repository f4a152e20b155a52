/**
 * Answers inside Slack (v0.4) under concurrency across processes: two web processes and two
 * workers (plus a sweeper) share one database and one Redis; 20 concurrent signed clicks on one
 * question, split between the two web processes, complete the slot exactly once, as one
 * principal; every click that did not complete it is told "already answered"; the question is
 * replaced without its controls. The Slack Web API and response_urls are a local stand-in.
 * Fixture: test/fixtures/slack-answers.flow.
 */
import test from "ava";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { dropDatabase, sql } from "../helpers/db.js";
import { startRun } from "../helpers/callback.js";
import { ADMIN_TOKEN, eventually, freePort, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { startSlackStandIn, type SlackStandIn } from "../helpers/slack-standin.js";

const SIGNING_SECRET = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const TEAM = "T0FINANCE";
const CHANNEL = "C0FINANCE";
const MEMBERS = ["U0ALICE", "U0BOB", "U0CAROL", "U0DAVE"];

let cluster: Cluster;
let webs: string[] = [];
let slack: SlackStandIn;

test.before(async () => {
  slack = await startSlackStandIn();
  for (const m of MEMBERS) slack.emails.set(m, `${m.toLowerCase()}@finance.example`);
  cluster = await startCluster("slackconc", { roles: ["web", "worker", "worker", "sweeper"], env: { SLOTFLOW_SLACK_API_URL: slack.apiUrl } });
  const otherPort = await freePort();
  await cluster.spawn("web", { port: otherPort });
  webs = [cluster.baseUrl, `http://127.0.0.1:${otherPort}`];
  const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(`${ROOT}/test/fixtures/slack-answers.flow`, "utf8") });
  if (deployed.status !== 201) throw new Error(deployed.text);
  const put = await request(cluster.baseUrl, "PUT", "/api/endpoints/finance-slack", {
    token: ADMIN_TOKEN,
    json: { kind: "slack-app", botToken: "xoxb-3333-4444-concurrencytoken", signingSecret: SIGNING_SECRET, channel: CHANNEL, answerAs: { roles: ["finance"] }, allowUsers: MEMBERS },
  });
  if (put.status !== 201) throw new Error(put.text);
});

test.after.always(async () => {
  await cluster?.stop();
  await slack?.close();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

function signed(payload: unknown, timestamp: number): { body: string; headers: Record<string, string> } {
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const ts = String(timestamp);
  const sig = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`;
  return { body, headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": sig } };
}

test("20 concurrent clicks across two web processes and two workers complete the slot once; the others are told it was already answered", async (t) => {
  const runId = await startRun(cluster.baseUrl, "SlackPay", { vendor: { name: "Wonka", mode: "buttons" } });
  const post = await eventually(async () => slack.of("chat.postMessage").find((c) => String(c.params.text).includes("Wonka")));
  const ref = (post.params.blocks as any[]).find((b) => b.type === "actions").elements[0].value as string;
  const now = Math.floor(Date.now() / 1000);
  const clicks = Array.from({ length: 20 }, (_, i) => {
    const user = MEMBERS[i % MEMBERS.length];
    const payload = {
      type: "block_actions",
      team: { id: TEAM },
      user: { id: user, team_id: TEAM },
      trigger_id: `trigger-${i}`,
      container: { type: "message", channel_id: CHANNEL },
      response_url: slack.responseUrl(`c${i}`),
      actions: [{ type: "button", action_id: i % 3 === 0 ? "slotflow_no" : "slotflow_yes", block_id: "slotflow_answer", value: ref, action_ts: `${now}.${String(i).padStart(6, "0")}` }],
    };
    return { web: webs[i % 2], req: signed(payload, now - (i % 5)) };
  });
  const answers = await Promise.all(clicks.map((c) => request(c.web, "POST", "/api/slack/interactions", { body: c.req.body, headers: c.req.headers })));
  t.deepEqual(answers.map((a) => a.status), Array(20).fill(200));

  const slot = await eventually(async () => {
    const s = (await sql(cluster.databaseUrl, "SELECT status, answered_by FROM slots WHERE run_id = $1 AND alias = 'decision'", [runId]))[0];
    return s?.status === "completed" ? s : undefined;
  });
  t.is(slot.answered_by.via, "slack");
  t.true(MEMBERS.map((m) => `slack:${TEAM}:${m}`).includes(slot.answered_by.id));
  const events = await sql(cluster.databaseUrl, "SELECT count(*)::int AS n FROM history WHERE run_id = $1 AND kind = 'event'", [runId]);
  t.is(events[0].n, 1);
  const applied = await sql(cluster.databaseUrl, "SELECT count(*)::int AS n FROM slots WHERE run_id = $1 AND status = 'completed'", [runId]);
  t.is(applied[0].n, 1);

  const replies = () => slack.calls.filter((c) => c.method === "response_url" && /^c\d+$/.test(c.responseId ?? ""));
  await eventually(async () => replies().filter((c) => c.params.response_type === "ephemeral").length === 19, 20_000);
  const ephemerals = replies().filter((c) => c.params.response_type === "ephemeral");
  t.true(ephemerals.every((c) => c.params.text === "This was already answered; your click changed nothing."));
  // replaced once: the row is claimed before the message is replaced (the web process and the sweeper race for it)
  const replaced = replies().filter((c) => c.params.replace_original === true);
  t.is(replaced.length + slack.of("chat.update").length, 1);
  if (replaced.length === 0) return;
  t.false((replaced[0].params.blocks as any[]).some((b) => b.type === "actions"));
  const winner = slot.answered_by.id.split(":")[2];
  t.true(JSON.stringify(replaced[0].params.blocks).includes(`by <@${winner}> at`));
  const told = new Set(ephemerals.map((c) => c.responseId));
  t.is(told.size, 19);
});
