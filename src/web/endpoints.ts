/**
 * The endpoints API and redelivery (issue 18; interfaces.md "Delivering links through other
 * channels"), bearer SLOTFLOW_ADMIN_TOKEN:
 *
 * | call | answers |
 * |---|---|
 * | `PUT /api/endpoints/{name}` `{kind, url}` | 201 `{name, kind, url, secret}` (secret for webhook, shown once; null otherwise); 200 `{name, kind, url}` on update; 422 invalid-body |
 * | `PUT /api/endpoints/{name}` `{kind: "http", url, headers?}` | as above, the secret shown once, plus `headers`: the header *names* (v0.5 "Calls"; values never shown again) |
 * | `PUT /api/endpoints/{name}` `{kind: "slack-app", botToken, signingSecret, channel, answerAs?, allowUsers?}` | 201 / 200 `{name, kind, host, channel, answerAs, allowUsers, botToken: "xoxb-…", signingSecret: "…"}` (never the secrets; v0.4 "Answers inside Slack"); 422 invalid-body |
 * | `GET /api/endpoints` | 200 `[{name, kind, host, createdAt, failingSince, disabledAt, disabledReason}]` (http: `headers`, names only) |
 * | `POST /api/endpoints/{name}/rotate` | 200 `{name, secret, previousSecretValidUntil}`; 404; 409 not-a-webhook |
 * | `DELETE /api/endpoints/{name}` | 204; 404 |
 * | `POST /api/runs/{id}/outbox/{messageId}/redeliver` | 202 `{id, status: "pending"}`; 404; 409 link-not-live |
 *
 * The PUT answer echoes the URL the caller just sent (it is theirs); no later answer shows it.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { endpointNameOr404, listEndpoints, removeEndpoint, rotateSecret, setEndpoint, setSlackAppEndpoint, validateEndpointBody, ROTATION_OVERLAP_MS } from "../endpoints/endpoints.js";
import { validateSlackAppBody } from "../channels/slack/app-settings.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { redeliver } from "../outbox/deliveries.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin } from "../auth/tokens.js";
import { dependency } from "../engine-client/dependency.js";
import { readBody } from "../http/request-body.js";
import { UUID } from "../json/uuid.js";

const BODY_LIMIT_BYTES = 16 * 1024;

export function endpointsRouter(rt: Runtime): Router {
  const router = new Router({ prefix: "/api", sensitive: true, strict: true });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };

  router.put("/endpoints/:name", admin, async (ctx) => {
    const name = ctx.params.name;
    endpointNameOr404(name);
    const body = await readBody(ctx, "json", BODY_LIMIT_BYTES, rt.config.limits.maxInputDepth);
    if ((body as { kind?: unknown } | null)?.kind === "slack-app") {
      const app = validateSlackAppBody(body);
      const result = await dependency(rt.log, "database", () => setSlackAppEndpoint(rt.db, rt.sealer, name, app, rt.config.slackApiUrl));
      ctx.status = result.created ? 201 : 200;
      ctx.set("Cache-Control", "no-store");
      ctx.body = { name, kind: "slack-app", host: new URL(rt.config.slackApiUrl).host, channel: app.channel, answerAs: app.answerAs, allowUsers: app.allowUsers, botToken: "xoxb-…", signingSecret: "…" };
      rt.log.info({ endpoint: name, kind: "slack-app", channel: app.channel, created: result.created }, "endpoint set");
      return;
    }
    const { kind, url, headers } = validateEndpointBody(body, rt.config.endpointsAllowPrivate);
    const result = await dependency(rt.log, "database", () => setEndpoint(rt.db, rt.sealer, name, kind, url, headers));
    ctx.status = result.created ? 201 : 200;
    const names = kind === "http" ? { headers: Object.keys(headers) } : {};
    ctx.body = result.created || result.secret ? { name, kind, url: url.toString(), secret: result.secret, ...names } : { name, kind, url: url.toString(), ...names };
    ctx.set("Cache-Control", "no-store");
    rt.log.info({ endpoint: name, kind, host: url.host, created: result.created }, "endpoint set");
  });

  router.get("/endpoints", admin, async (ctx) => {
    ctx.body = await dependency(rt.log, "database", () => listEndpoints(rt.db));
  });

  router.post("/endpoints/:name/rotate", admin, async (ctx) => {
    const name = ctx.params.name;
    endpointNameOr404(name);
    const secret = await dependency(rt.log, "database", () => rotateSecret(rt.db, rt.sealer, name));
    ctx.set("Cache-Control", "no-store");
    ctx.body = { name, secret, previousSecretValidUntil: new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString() };
    rt.log.info({ endpoint: name }, "endpoint secret rotated");
  });

  router.delete("/endpoints/:name", admin, async (ctx) => {
    const name = ctx.params.name;
    endpointNameOr404(name);
    if (!(await dependency(rt.log, "database", () => removeEndpoint(rt.db, name)))) {
      throw new RefusalError(refuse(RefusalCode.NotFound, `No endpoint is named "${name}".`));
    }
    rt.log.info({ endpoint: name }, "endpoint removed");
    ctx.status = 204;
  });

  router.post("/runs/:id/outbox/:messageId/redeliver", admin, async (ctx) => {
    const { id, messageId } = ctx.params;
    if (!UUID.test(id) || !UUID.test(messageId)) throw new RefusalError(refuse(RefusalCode.NotFound, "This run has no such outbox message."));
    const result = await dependency(rt.log, "database", () => redeliver(rt.db, id.toLowerCase(), messageId.toLowerCase()));
    if (!result.ok) {
      const code = result.code === "not-found" ? RefusalCode.NotFound : RefusalCode.LinkNotLive;
      throw new RefusalError(refuse(code, result.code === "not-found" ? result.reason : `Not redelivered: the link it carries is no longer live (${result.reason}).`, result.code === "link-not-live" ? { reason: result.reason } : undefined));
    }
    await dependency(rt.log, "redis", () => rt.queues.enqueueDeliveries([{ deliveryId: messageId.toLowerCase(), runId: id.toLowerCase(), attempt: `r${Date.now()}` }]));
    rt.log.info({ runId: id, deliveryId: messageId }, "redelivery queued");
    ctx.status = 202;
    ctx.body = { id: messageId.toLowerCase(), status: "pending" };
  });

  return router;
}
