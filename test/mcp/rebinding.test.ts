/**
 * POST /mcp's DNS-rebinding rule (src/mcp/http.ts rebindingRefusal; docs/agents.md "Over HTTP"),
 * for a public BASE_URL and a loopback one. The HTTP behaviour is tested end to end in
 * test/e2e/mcp.test.ts and by the conformance runner (test/e2e/mcp-conformance.test.ts).
 */
import test from "ava";
import { rebindingRefusal } from "../../src/mcp/http.js";

test("a public BASE_URL: any Host (proxies rewrite it); an Origin only when it is BASE_URL's own", (t) => {
  const base = "https://slotflow.example.com";
  t.is(rebindingRefusal(base, "slotflow.example.com", undefined), null);
  t.is(rebindingRefusal(base, "10.0.0.7:3000", undefined), null, "a program behind a proxy sends no Origin");
  t.is(rebindingRefusal(base, "slotflow.example.com", "https://slotflow.example.com"), null);
  t.regex(rebindingRefusal(base, "slotflow.example.com", "https://evil.example") ?? "", /another site \(Origin: https:\/\/evil\.example\)/);
  t.truthy(rebindingRefusal(base, "slotflow.example.com", "http://slotflow.example.com"), "another scheme is another origin");
  t.truthy(rebindingRefusal(base, "slotflow.example.com", "http://localhost:3000"), "a loopback page is not this server's origin");
  t.truthy(rebindingRefusal(base, "slotflow.example.com", "null"), "an opaque origin");
});

test("a loopback BASE_URL: Host must be a loopback name, any port; any loopback Origin", (t) => {
  const base = "http://localhost:3000";
  for (const host of ["localhost:3000", "127.0.0.1:4000", "[::1]:3000", "LOCALHOST"]) t.is(rebindingRefusal(base, host, undefined), null, host);
  t.is(rebindingRefusal(base, "127.0.0.1:3000", "http://127.0.0.1:5173"), null);
  t.regex(rebindingRefusal(base, "evil.example:3000", undefined) ?? "", /loopback host name \(Host: evil\.example:3000\)/);
  t.truthy(rebindingRefusal(base, "localhost:3000", "http://evil.example"));
  t.truthy(rebindingRefusal(base, "", undefined), "no Host at all");
  t.truthy(rebindingRefusal(base, "local host", undefined), "a Host that does not parse");
});
