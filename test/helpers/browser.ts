/**
 * A real browser for the responder-page tests: Debian's Chromium (`/usr/bin/chromium`, or
 * SLOTFLOW_TEST_CHROMIUM) driven by playwright-core, headless, with no network beyond the
 * server under test. Screenshots go to test/artifacts/ (not committed; docs/images/ holds the
 * copies the README shows).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { ROOT } from "./server.js";

export const ARTIFACTS = join(ROOT, "test", "artifacts");

export const PHONE = { width: 360, height: 740 };
export const DESKTOP = { width: 1280, height: 900 };

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: process.env.SLOTFLOW_TEST_CHROMIUM || "/usr/bin/chromium",
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}
