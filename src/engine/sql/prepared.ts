/**
 * Prepared statements for the hot path. A statement registered here is sent to PostgreSQL under
 * its name (`Parse` once per connection, then only `Bind`/`Execute`), so the server parses and
 * plans it once per connection instead of on every deposit; every other statement (Prisma's own,
 * and raw ones not registered) stays unnamed. db.ts hands `statementName` to the driver adapter
 * (`@prisma/adapter-pg`'s `statementNameGenerator`), which names a query by its exact SQL text.
 *
 * Only fixed texts are registered, so a connection holds a handful of prepared statements at
 * most. A connection pooler in front of PostgreSQL must keep prepared statements per client
 * (PgBouncer ≥ 1.21 with `max_prepared_statements`, or session pooling): docs/configuration.md.
 */

const byText = new Map<string, string>();

/**
 * Registers `text` under `name` (unique, `[a-z_]+`) and returns the text unchanged, to be sent with
 * `$queryRawUnsafe(text, …params)` / `$executeRawUnsafe`. Throws when the name is taken by another text.
 */
export function prepared(name: string, text: string): string {
  for (const [t, n] of byText) if (n === name && t !== text) throw new Error(`prepared statement name ${name} is taken`);
  byText.set(text, name);
  return text;
}

/** The prepared statement name of `query.sql`, or undefined for an unnamed (unregistered) statement. */
export function statementName(query: { sql: string }): string {
  return byText.get(query.sql) as string; // undefined leaves the statement unnamed
}
