/**
 * The set-up most browser suites share: one real `slotflow serve` (startCluster) with test fixtures
 * deployed and one headless Chromium, started before the file's tests and stopped after them, the
 * database dropped. Read `suite.cluster`, `suite.base` and `suite.browser` inside tests (they are
 * set once `test.before` has run).
 */
import type { TestFn } from "ava";
import type { Browser } from "playwright-core";
import { launchBrowser } from "./browser.js";
import { deployFixture } from "./callback.js";
import { dropDatabase } from "./db.js";
import { startCluster, type Cluster } from "./server.js";

export interface BrowserSuite {
  cluster: Cluster;
  /** The cluster's base URL. */
  base: string;
  browser: Browser;
}

/** Registers the suite's before/after hooks on `test`: `label` names its database; `fixtures` are files of test/fixtures deployed in order. */
export function useBrowserSuite(test: TestFn, label: string, fixtures: string[], env: NodeJS.ProcessEnv = {}): BrowserSuite {
  const suite = {} as BrowserSuite;
  test.before(async () => {
    [suite.cluster, suite.browser] = await Promise.all([startCluster(label, { env }), launchBrowser()]);
    suite.base = suite.cluster.baseUrl;
    for (const file of fixtures) await deployFixture(suite.base, file);
  });
  test.after.always(async () => {
    await suite.browser?.close();
    await suite.cluster?.stop();
    if (suite.cluster) await dropDatabase(suite.cluster.databaseUrl);
  });
  return suite;
}
