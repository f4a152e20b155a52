/**
 * Bench-only preload (never loaded by slotflow itself): counts the statements this process sends
 * to PostgreSQL (every `pg` Client.query call: BEGIN and COMMIT included, one per round trip) and
 * the commands it sends to Redis (every ioredis `sendCommand`: a Lua script call is one command,
 * a blocking read is one command), by name. Loaded through NODE_OPTIONS="--import=…" by
 * bench/lib/cluster.ts when SLOTFLOW_BENCH_COUNT_DIR is set; writes
 * `{ pid, sql: {total, byVerb}, redis: {total, byName}, pauses, minorGcMs }` to
 * `$SLOTFLOW_BENCH_COUNT_DIR/<pid>.json` every 100 ms so the benchmark can read deltas from outside.
 * `pauses` lists the process's GC pauses and event-loop stalls (see below).
 */
import { writeFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const dir = process.env.SLOTFLOW_BENCH_COUNT_DIR;
const { isMainThread } = await import("node:worker_threads");
if (dir && isMainThread) {
  const require = createRequire(join(process.cwd(), "package.json"));
  const pg = require("pg");
  const { Redis } = require("ioredis");
  const counts = { pid: process.pid, argv: process.argv.slice(2).join(" "), sql: { total: 0, byVerb: {}, byText: {} }, redis: { total: 0, byName: {} } };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, callback) {
    const text = typeof config === "string" ? config : config?.text;
    if (typeof text === "string") {
      const verb = (/^\s*(?:WITH\b.*?\)\s*)?([A-Za-z]+)/s.exec(text.slice(0, 200))?.[1] ?? "?").toUpperCase();
      counts.sql.total++;
      counts.sql.byVerb[verb] = (counts.sql.byVerb[verb] ?? 0) + 1;
      const shape = text.replace(/\s+/g, " ").trim().slice(0, 90);
      counts.sql.byText[shape] = (counts.sql.byText[shape] ?? 0) + 1;
    }
    return query.call(this, config, values, callback);
  };
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command, stream) {
    const name = String(command?.name ?? "?").toLowerCase();
    counts.redis.total++;
    counts.redis.byName[name] = (counts.redis.byName[name] ?? 0) + 1;
    return send.call(this, command, stream);
  };
  // Pauses of this process's main thread, for reading a latency tail: each GC pause over 2 ms
  // (kind: minor = scavenge, major = mark-compact or its incremental steps, as V8 reports them)
  // and, per 100 ms flush, the longest event-loop delay if over 10 ms (Node's
  // monitorEventLoopDelay), as [epoch ms, kind, ms]; the last 500 are kept. Minor GC time is also
  // summed, since scavenges are many and short.
  counts.pauses = [];
  counts.minorGcMs = 0;
  const { PerformanceObserver, constants, monitorEventLoopDelay } = await import("node:perf_hooks");
  const pause = (kind, ms) => {
    counts.pauses.push([Date.now(), kind, Math.round(ms * 10) / 10]);
    if (counts.pauses.length > 500) counts.pauses.shift();
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const minor = e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
      if (minor) counts.minorGcMs += e.duration;
      if (e.duration > 2) pause(minor ? "minor-gc" : "major-gc", e.duration);
    }
  }).observe({ entryTypes: ["gc"] });
  const RESOLUTION_MS = 5;
  const loopDelay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  loopDelay.enable();
  const recordStall = () => {
    // The histogram records the time between its timer's ticks (ns), the resolution included.
    const ms = loopDelay.max / 1e6 - RESOLUTION_MS;
    if (ms > 10) pause("stall", ms);
    loopDelay.reset();
  };
  const file = join(dir, `${process.pid}.json`);
  const flush = () => {
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(counts));
      renameSync(`${file}.tmp`, file);
    } catch {
      // the directory may be gone at the end of a run
    }
  };
  setInterval(() => {
    recordStall();
    flush();
  }, 100).unref();
  process.on("exit", flush);
}

/**
 * With SLOTFLOW_BENCH_CPU_PROF_DIR set, the process also runs V8's CPU profiler between two
 * SIGUSR2 signals (`node --cpu-prof` is not allowed in NODE_OPTIONS, and would profile start-up
 * too): the first starts it, the second writes `<dir>/<pid>.cpuprofile`. bench/deposits.ts sends
 * them around its C=10 phase.
 */
const profDir = process.env.SLOTFLOW_BENCH_CPU_PROF_DIR;
if (profDir) {
  const inspector = await import("node:inspector");
  const { writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const session = new inspector.Session();
  session.connect();
  let running = false;
  process.on("SIGUSR2", () => {
    if (!running) {
      running = true;
      session.post("Profiler.enable", () => {
        session.post("Profiler.setSamplingInterval", { interval: 500 }, () => session.post("Profiler.start"));
      });
      return;
    }
    running = false;
    session.post("Profiler.stop", (err, res) => {
      if (!err) writeFileSync(join(profDir, `${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
