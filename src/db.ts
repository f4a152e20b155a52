/**
 * The Prisma client, through the PostgreSQL driver adapter (no native query engine).
 * `Tx` is the client handed to a function inside `prisma.$transaction(async (tx) => …)`.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { statementName } from "./engine/sql/prepared.js";
import { PrismaClient } from "./generated/prisma/client.js";

export { PrismaClient };
export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

/**
 * Creates a client for `databaseUrl`; `poolSize` is the maximum number of connections. The hot
 * path's statements are sent as prepared statements (engine/sql/prepared.ts).
 */
export function createDb(databaseUrl: string, poolSize = 10): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize }, { statementNameGenerator: statementName });
  return new PrismaClient({ adapter });
}
