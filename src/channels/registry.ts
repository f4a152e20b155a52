/**
 * The channels, by endpoint kind (issue 39 item 2). The delivery lifecycle (outbox/deliveries.ts)
 * dispatches every attempt through `channelFor`; adding a channel is one folder under
 * src/channels/ and one line here (README.md "Adding a channel").
 *
 * An `http` endpoint is no channel: it is called by `call http` (src/calls/), never sent to.
 */
import type { Channel, Statement } from "./channel.js";
import { slackAppChannel, slackChannel } from "./slack/channel.js";
import { teamsChannel } from "./teams/teams.js";
import { webhookChannel } from "./webhook/webhook.js";

const CHANNELS: ReadonlyMap<string, Channel> = new Map(
  [
    webhookChannel,
    slackChannel,
    slackAppChannel,
    teamsChannel,
  ].map((c) => [c.kind, c]),
);

/** The channel serving endpoints of `kind`; undefined for a kind that takes no deliveries (`http`). */
export function channelFor(kind: string): Channel | undefined {
  return CHANNELS.get(kind);
}

/** The kinds that take deliveries, in registry order. */
export function channelKinds(): string[] {
  return [...CHANNELS.keys()];
}

/**
 * Why a `send <statement>` cannot go to an endpoint of `kind` (recorded as the delivery's failure,
 * never retried), or null when it can. The words are those of the deliveries API since issue 18.
 */
export function unfitReason(kind: string, statement: Statement): string | null {
  const channel = channelFor(kind);
  if (!channel) return `a send ${statement} cannot go to a ${kind} endpoint${kind === "http" ? ": http endpoints are called with call http" : ""}`;
  if (!channel.statements.includes(statement)) return `a send ${statement} cannot go to a ${kind} endpoint: use send message`;
  return null;
}
