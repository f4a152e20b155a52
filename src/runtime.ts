/**
 * What every slotflow process shares: its configuration, logger, database client, sealer, queues
 * and mail transport. `createRuntime()` builds them once at start-up; `close()` releases them.
 */
import { loadConfig, type Config } from "./config.js";
import { createDb, type Db } from "./db.js";
import type { EngineDeps } from "./engine/apply.js";
import { Sealer } from "./engine/seal.js";
import { createLogger, type Logger } from "./log.js";
import { smtpTransport, terminalTransport, type MailTransport } from "./outbox/mailer.js";
import { Queues } from "./queue/queues.js";

export interface Runtime {
  config: Config;
  log: Logger;
  db: Db;
  sealer: Sealer;
  queues: Queues;
  transport: MailTransport;
  engine: EngineDeps;
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
  const transport = options.transport ?? (config.smtpUrl ? smtpTransport(config.smtpUrl, config.mail) : terminalTransport());
  const engine: EngineDeps = { db, sealer, baseUrl: config.baseUrl, log, limits: config.limits };
  return {
    config,
    log,
    db,
    sealer,
    queues,
    transport,
    engine,
    async close() {
      await queues.close();
      await db.$disconnect();
    },
  };
}

/** Warns about secrets running on their development defaults. */
export function warnDevDefaults(rt: Runtime): void {
  for (const name of rt.config.devDefaults) {
    rt.log.warn({ variable: name }, `${name} is not set: using a development value (set it in production)`);
  }
}
