/**
 * A real HTTP receiver on 127.0.0.1 (or ::1) for delivery tests (issue 18): records every request
 * (path, headers, body, arrival time) and answers each with what `reply` says for its path. It
 * also counts every TCP connection it accepts, so a test can show that nothing connected at all —
 * an `https://` attempt at this plain-HTTP server would never become a recorded request.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** TCP connections accepted so far (whether or not they carried a request). */
  readonly connections: number;
  /** Requests to one path, in arrival order. */
  at(path: string): Received[];
  /** Sets the answer for a path (default 200). */
  reply(path: string, answer: Reply | ((n: number) => Reply)): void;
  close(): Promise<void>;
}

/** Starts a receiver listening on `host` (127.0.0.1 unless told, e.g. "::1"), on a free port. */
export async function startReceiver(host = "127.0.0.1"): Promise<Receiver> {
  const received: Received[] = [];
  let connections = 0;
  const replies = new Map<string, Reply | ((n: number) => Reply)>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const r = replies.get(path) ?? { status: 200 };
      const answer = typeof r === "function" ? r(received.filter((x) => x.path === path).length) : r;
      res.writeHead(answer.status, answer.headers ?? {}).end("ok");
    });
  });
  server.on("connection", () => void connections++);
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    received,
    get connections() {
      return connections;
    },
    at: (path) => received.filter((r) => r.path === path),
    reply: (path, answer) => void replies.set(path, answer),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
