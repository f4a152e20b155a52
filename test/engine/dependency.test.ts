/**
 * Which failures answer 503 (src/engine-client/dependency.ts; issue 8 item 15): only a dependency that cannot
 * be reached. Real errors from a real PostgreSQL (and from a closed port), no stand-ins.
 */
import test from "ava";
import { createDb } from "../../src/db.js";
import { freePort } from "../helpers/server.js";
import { isUnavailability } from "../../src/engine-client/dependency.js";
import { dropDatabase, freshDatabase } from "../helpers/db.js";

let url = "";
test.before(async () => {
  url = await freshDatabase("dependency");
});
test.after.always(async () => {
  if (url) await dropDatabase(url);
});

const caught = async (fn: () => Promise<unknown>): Promise<unknown> => {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
};

test("a database that cannot be reached is unavailability (503)", async (t) => {
  const down = new URL(url);
  down.port = String(await freePort());
  const db = createDb(down.toString(), 1);
  try {
    t.true(isUnavailability(await caught(() => db.workflow.findUnique({ where: { name: "W" } }))));
  } finally {
    await db.$disconnect();
  }
});

test("a raw query to a database that cannot be reached is unavailability (503)", async (t) => {
  const down = new URL(url);
  down.port = String(await freePort());
  const db = createDb(down.toString(), 1);
  try {
    t.true(isUnavailability(await caught(() => db.$queryRaw`SELECT 1`)));
  } finally {
    await db.$disconnect();
  }
});

test("a value the database refuses and a query error are not unavailability", async (t) => {
  const db = createDb(url, 1);
  try {
    const nul = await caught(() => db.workflow.findUnique({ where: { name: "a\u0000b" } }));
    t.false(isUnavailability(nul), String(nul));
    const division = await caught(() => db.$queryRaw`SELECT 1 / 0`);
    t.false(isUnavailability(division), String(division));
  } finally {
    await db.$disconnect();
  }
});

test("a program error (stack overflow, type error) is not unavailability", (t) => {
  const overflow = (() => {
    const deep = (n: number): number => deep(n + 1) + 1;
    try {
      return deep(0);
    } catch (err) {
      return err;
    }
  })();
  t.true(overflow instanceof RangeError);
  t.false(isUnavailability(overflow));
  t.false(isUnavailability(new TypeError("x is not a function")));
});
