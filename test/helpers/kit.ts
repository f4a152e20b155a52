/**
 * Sets up the testing kit for one test file: a fresh database in DATABASE_URL before the kit's
 * first use, dropped (with the kit's connections closed) after the file's tests.
 */
import type { TestFn } from "ava";
import { Workflow } from "../../src/testing/index.js";
import { dropDatabase, freshDatabase } from "./db.js";

export function useKitDatabase(test: TestFn, label: string): void {
  let url = "";
  test.before(async () => {
    url = await freshDatabase(label);
    process.env.DATABASE_URL = url;
    process.env.BASE_URL = "http://slotflow.test";
  });
  test.after.always(async () => {
    await Workflow.disconnect();
    if (url) await dropDatabase(url);
  });
}
