/**
 * What every slotflow process shares: its configuration, logger, database client, sealer, queues
 * and mail transport. `createRuntime()` builds them once at start-up; `close()` releases them.
 */
import { loadConfig, type Config } from "./config.js";
import { createDb, type Db } from "./db.js";
import type { EngineDeps } from "./engine/commands/apply.js";
import { recordPending } from "./engine/commands/pending.js";
import { Sealer } from "./engine/sealing/seal.js";
import { createLogger, type Logger } from "./log.js";
import { smtpTransport, terminalTransport, type MailTransport } from "./channels/email/transport.js";
import { Queues } from "./queue/queues.js";
import { announceRunEnded } from "./engine/run-end.js";
import { CurrentVersions } from "./engine/versions/version-cache.js";
import { receiptKeySource, type ReceiptKeySource } from "./engine/receipts/keys.js";

export interface Runtime {
  config: Config;
  log: Logger;
  db: Db;
  sealer: Sealer;
  queues: Queues;
  /** Each workflow's current version, cached and invalidated by deploys across processes (issue 22). */
  versions: CurrentVersions;
  transport: MailTransport;
  engine: EngineDeps;
  /** The receipt keys, newest first, loaded on first use (engine/receipts/keys.ts); empty: no receipts. */
  receiptKeys: ReceiptKeySource;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  config?: Config;
  log?: Logger;
  transport?: MailTransport;
}

export function createRuntime(options: RuntimeOptions = {}): Runtime {
  const config = options.config ?? loadConfig();
  const log = options.log ?? createLogger(config.logLevel);
  const db = createDb(config.databaseUrl, Math.max(10, config.workerConcurrency + 4));
  const sealer = new Sealer(config.sealKeys);
  const queues = new Queues(config);
  // A 202 is recorded in PostgreSQL before it is given (issue 34 item 3; src/engine/commands/pending.ts).
  queues.beforeAccept = (cmd) => recordPending(db, sealer, cmd);
  const versions = new CurrentVersions(config, queues.connection);
  const transport = options.transport ?? (config.smtpUrl ? smtpTransport(config.smtpUrl, config.mail, {}, config.baseUrl) : terminalTransport());
  const receiptKeys = receiptKeySource({ configured: config.receiptKeys, production: config.nodeEnv === "production", db, sealer });
  const engine: EngineDeps = {
    db, sealer, baseUrl: config.baseUrl, log, limits: config.limits, receiptKeys,
    // v0.5 Results: a run's end, after commit, to the result waiters of every web process (engine/run-end.ts)
    runEnded: (runId) => void announceRunEnded(queues.connection, config.queuePrefix, runId),
  };
  return {
    config,
    log,
    db,
    sealer,
    queues,
    versions,
    transport,
    engine,
    receiptKeys,
    async close() {
      await versions.close();
      await queues.close();
      await db.$disconnect();
    },
  };
}

/**
 * Loads the receipt keys at start (v0.4 "Receipts"; docs/receipts.md): a key that cannot be read
 * fails the start; production without SLOTFLOW_RECEIPT_KEYS warns that completions carry no receipt.
 */
export async function loadReceiptKeys(rt: Pick<Runtime, "receiptKeys" | "log" | "config">): Promise<void> {
  const keys = await rt.receiptKeys();
  if (keys.length === 0) rt.log.warn({ variable: "SLOTFLOW_RECEIPT_KEYS" }, "SLOTFLOW_RECEIPT_KEYS is not set: completed deposits carry no receipt");
  else if (rt.config.receiptKeys === "") rt.log.warn({ variable: "SLOTFLOW_RECEIPT_KEYS" }, "SLOTFLOW_RECEIPT_KEYS is not set: receipts are signed with a development key kept in the database");
}

/** Warns about secrets running on their development defaults. */
export function warnDevDefaults(rt: Runtime): void {
  for (const name of rt.config.devDefaults) {
    rt.log.warn({ variable: name }, `${name} is not set: using a development value (set it in production)`);
  }
}

/**
 * After a deploy committed: tells every process to forget `workflow`'s cached current version
 * (engine/versions/version-cache.ts, issue 22). A Redis that does not take the message is logged, not
 * thrown: the deploy stands, and other processes see it within the cache's maximum age (30 s).
 */
export async function announceDeploy(rt: Pick<Runtime, "versions" | "log">, workflow: string): Promise<void> {
  await rt.versions.announce(workflow).catch((err: unknown) => {
    rt.log.warn({ workflow, err: String(err) }, "could not announce the deploy; other processes see it within 30 s");
  });
}
