/**
 * Fault injection for end-to-end tests:
 *
 * - `spawnWithEnv` starts one more slotflow process for a cluster with some environment variables
 *   overridden (for example a DATABASE_URL whose port is closed). It joins `cluster.processes`,
 *   so `cluster.stop()` stops it and `cluster.output()` includes its lines.
 * - `TcpProxy` forwards a loopback port to another one (PostgreSQL, Redis) until `cut()` closes
 *   every connection and stops listening, so the dependency becomes unreachable for whoever
 *   connected through the proxy (connections are refused), while the rest of the cluster,
 *   connected directly, keeps working.
 */
import net from "node:net";
import type { Cluster, ServerProcess } from "./server.js";

export function spawnWithEnv(
  cluster: Cluster,
  role: "serve" | "web" | "worker" | "sweeper",
  opts: { port: number; env: NodeJS.ProcessEnv },
): Promise<ServerProcess> {
  return cluster.spawn(role, { port: opts.port, env: opts.env });
}

/**
 * Ends a process at once (SIGKILL) and waits for it to exit. For processes a test broke on
 * purpose, which need not shut down gracefully (a web process whose Redis is gone waits on it).
 */
export function kill(proc: ServerProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) return resolve();
    proc.child.once("exit", () => resolve());
    proc.child.kill("SIGKILL");
  });
}

export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly targetPort: number, private readonly targetHost = "127.0.0.1") {}

  /** Starts forwarding on a free loopback port (or `port`, when restarting). */
  async start(port = 0): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Closes every forwarded connection and stops listening: new connections are refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
