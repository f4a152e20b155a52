/**
 * A throwaway redis-server for tests that break Redis on purpose: its own free port, no
 * persistence, killed (SIGKILL) or stopped by the test. Never the machine's shared Redis.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./server.js";

export interface ThrowawayRedis {
  url: string;
  child: ChildProcess;
  /** SIGKILL: the server is gone at once, mid-command. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty: no persistence). */
  restart(): Promise<void>;
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdio: "ignore" });
  child.unref(); // never what keeps a test process alive; killed on exit below
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch (err) {
      probe.disconnect();
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return child;
}

export async function startRedisServer(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "slotflow-test-redis-"));
  const server: ThrowawayRedis = {
    url: `redis://127.0.0.1:${port}`,
    child: await launch(port, dir),
    kill: () =>
      new Promise<void>((resolve) => {
        const child = server.child;
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
    async restart() {
      await server.kill();
      server.child = await launch(port, dir);
    },
  };
  process.once("exit", () => {
    server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  return server;
}
