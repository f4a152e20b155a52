/**
 * The channel registry (issue 39 item 2, src/channels/registry.ts): every endpoint kind that takes
 * deliveries has one channel, `http` has none, and a statement a kind does not take is refused
 * with the words the deliveries API has used since issue 18.
 */
import test from "ava";
import { ENDPOINT_KINDS } from "../../src/endpoints/endpoints.js";
import { channelFor, channelKinds, unfitReason } from "../../src/channels/registry.js";

test("every endpoint kind but http has exactly one channel, serving that kind", (t) => {
  for (const kind of ENDPOINT_KINDS) {
    const channel = channelFor(kind);
    if (kind === "http") t.is(channel, undefined, "http endpoints are called, not sent to");
    else t.is(channel?.kind, kind);
  }
  t.deepEqual([...channelKinds()].sort(), ENDPOINT_KINDS.filter((k) => k !== "http").sort());
});

test("unfit statements are refused with the deliveries' words", (t) => {
  t.is(unfitReason("webhook", "webhook"), null);
  t.is(unfitReason("webhook", "message"), null);
  t.is(unfitReason("slack", "message"), null);
  t.is(unfitReason("slack", "webhook"), "a send webhook cannot go to a slack endpoint: use send message");
  t.is(unfitReason("teams", "webhook"), "a send webhook cannot go to a teams endpoint: use send message");
  t.is(unfitReason("slack-app", "webhook"), "a send webhook cannot go to a slack-app endpoint: use send message");
  t.is(unfitReason("http", "message"), "a send message cannot go to a http endpoint: http endpoints are called with call http");
});

test("only slack-app carries answer controls and has an inbound door; every URL setting is sealed", (t) => {
  const answering = channelKinds().filter((k) => channelFor(k)?.answers);
  t.deepEqual(answering, ["slack-app"]);
  t.is(channelFor("slack-app")?.inbound?.path, "POST /api/slack/interactions");
  for (const k of ["webhook", "slack", "teams"]) t.true(channelFor(k)!.settings.some((s) => s.name === "url" && s.sealed));
});
