// The compatibility set (`npm run test:compat`): what CI runs on Node 20, the oldest Node slotflow
// supports, beside the fuzz, fault and partitioned-schema suites (which also run on Node 20); the
// whole `npm test` runs on Node 24 LTS (.ci/run, docs/testing.md "Which Node runs what"). These are
// the files whose outcome depends on the Node that runs them — each one for a reason:
import base from "./ava.built.config.js";

export default {
  ...base,
  files: [
    // npm pack, install into a fresh project, tsc, ava and a task worker killed with -9: a user's app on Node 20
    ".tmp/tests/test/package/packed-kit.test.js",
    // the SDK's typed client (fetch, long-polled results) and task worker (leases, a second completion refused)
    ".tmp/tests/test/sdk/client.test.js",
    ".tmp/tests/test/sdk/task-worker.test.js",
    // ICU: message catalogs, plural rules and dates differ with Node's ICU version; Chromium with a locale
    ".tmp/tests/test/i18n/catalogs.test.js",
    ".tmp/tests/test/e2e/languages-browser.test.js",
    // the headline: a link minted, answered once by page and by JSON, refused after
    ".tmp/tests/test/e2e/callback-links.test.js",
    // calls out: fetch to a real service, signed, with an Idempotency-Key, retried
    ".tmp/tests/test/calls/calls-e2e.test.js",
    // jose on this Node's WebCrypto: receipts python3-jwcrypto verifies; Slack's HMAC signing against bolt's
    ".tmp/tests/test/e2e/receipts.test.js",
    ".tmp/tests/test/slack/verify.test.js",
    // the official MCP client over streamable HTTP; oidc-provider and openid-client sign-in
    ".tmp/tests/test/e2e/mcp.test.js",
    ".tmp/tests/test/e2e/sign-in-oidc.test.js",
  ],
};
