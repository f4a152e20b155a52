/**
 * A local stand-in for Slack (v0.4 "Answers inside Slack" tests): the Web API methods slotflow
 * calls, at `${url}/api/` (SLOTFLOW_SLACK_API_URL), answering as Slack documents them (shapes
 * typed with @slack/web-api's response types), and `response_url`s at `${url}/response/{id}`.
 * Every request is recorded: method, Authorization header, and its parameters (form or JSON,
 * `blocks` / `view` parsed).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { ChatPostEphemeralResponse, ChatPostMessageResponse, ChatUpdateResponse, UsersInfoResponse, ViewsOpenResponse } from "@slack/web-api";

export interface SlackCall {
  /** `chat.postMessage`, … or `response_url`. */
  method: string;
  /** For `response_url`: the id in its path. */
  responseId?: string;
  authorization: string | undefined;
  params: Record<string, any>;
  raw: string;
}

export interface SlackStandIn {
  url: string;
  apiUrl: string;
  calls: SlackCall[];
  /** Email by user id, for users.info. */
  emails: Map<string, string>;
  /** A response_url for interaction `id`. */
  responseUrl(id: string): string;
  /** Makes the next `n` calls of `method` answer `{ok: false, error}`. */
  failNext(method: string, error: string, n?: number): void;
  of(method: string): SlackCall[];
  close(): Promise<void>;
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function paramsOf(raw: string, type: string | undefined): Record<string, any> {
  let out: Record<string, any>;
  if ((type ?? "").includes("application/json")) out = raw ? (JSON.parse(raw) as Record<string, any>) : {};
  else out = Object.fromEntries(new URLSearchParams(raw));
  for (const k of ["blocks", "view", "attachments"]) if (typeof out[k] === "string") out[k] = JSON.parse(out[k]);
  return out;
}

export async function startSlackStandIn(): Promise<SlackStandIn> {
  const calls: SlackCall[] = [];
  const emails = new Map<string, string>();
  const failures = new Map<string, { error: string; n: number }>();
  let seq = 0;
  const server: Server = createServer(async (req, res) => {
    const raw = await readAll(req);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const params = paramsOf(raw, req.headers["content-type"]);
    const send = (body: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const response = /^\/response\/([^/]+)$/.exec(path);
    if (response) {
      calls.push({ method: "response_url", responseId: response[1], authorization: req.headers.authorization, params, raw });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      return;
    }
    const method = /^\/api\/([a-zA-Z.]+)$/.exec(path)?.[1] ?? path;
    calls.push({ method, authorization: req.headers.authorization, params, raw });
    const failing = failures.get(method);
    if (failing && failing.n > 0) {
      failing.n--;
      send({ ok: false, error: failing.error });
      return;
    }
    switch (method) {
      case "chat.postMessage": {
        const ts = `1764170000.${String(++seq).padStart(6, "0")}`;
        const body: ChatPostMessageResponse = { ok: true, channel: String(params.channel), ts, message: { type: "message", text: String(params.text), ts } };
        return send(body);
      }
      case "chat.update": {
        const body: ChatUpdateResponse = { ok: true, channel: String(params.channel), ts: String(params.ts), text: String(params.text) };
        return send(body);
      }
      case "chat.postEphemeral": {
        const body: ChatPostEphemeralResponse = { ok: true, message_ts: `1764170000.${String(++seq).padStart(6, "0")}` };
        return send(body);
      }
      case "users.info": {
        const id = String(params.user);
        const email = emails.get(id);
        if (!email) return send({ ok: false, error: "user_not_found" });
        const body: UsersInfoResponse = { ok: true, user: { id, name: id.toLowerCase(), profile: { email } } };
        return send(body);
      }
      case "views.open": {
        const body: ViewsOpenResponse = { ok: true, view: { id: `V${++seq}`, type: "modal", hash: `h${seq}` } };
        return send(body);
      }
      default:
        return send({ ok: false, error: "unknown_method" });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    apiUrl: `${url}/api/`,
    calls,
    emails,
    responseUrl: (id) => `${url}/response/${id}`,
    failNext: (method, error, n = 1) => void failures.set(method, { error, n }),
    of: (method) => calls.filter((c) => c.method === method),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
