/**
 * Security, round two — console routes (issue 38, M1; docs/operations.md "Security, round two"):
 * no path variant reaches a handler without credentials. Every route of every router the web
 * process mounts is collected from the routers' own stacks (`webRouters`, so a route added later is
 * covered without touching this test), and each is asked, with no credentials, through the case
 * and trailing-slash variants of its path — `/CONSOLE/runs`, `/Console/runs/<id>/cancel`,
 * `/console/runs/` … — against a real `slotflow serve`. Every answer must be a refusal (401, 403,
 * 404 or 405): never a 2xx or 3xx (a handler answered) and never a 5xx (a handler crashed).
 * The queue dashboard (Bull Board, mounted by a middleware rather than a router) gets the same
 * variants of its own paths.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { loadConfig } from "../../src/config.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { webRouters } from "../../src/web/app.js";
import { dropDatabase } from "../helpers/db.js";
import { startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let rt: Runtime;

test.before(async () => {
  cluster = await startCluster("routevariants", { env: { SLOTFLOW_VIEWER_TOKEN: "test-viewer-token", SLOTFLOW_RATE_LIMIT_PER_MINUTE: "100000" } });
  rt = createRuntime({ config: loadConfig(cluster.env) });
});

test.after.always(async () => {
  await rt?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const RUN = randomUUID();

/** A concrete path for a route template: each `:param` filled with a plausible value. */
function concrete(template: string): string {
  return template.replace(/:([A-Za-z_]+)(\([^)]*\))?\??/g, (_m, name: string) => {
    if (/id$/i.test(name)) return RUN;
    if (name === "token") return "sfl_" + "A".repeat(49);
    if (name === "alias") return "decision";
    if (name === "name") return "VendorApproval";
    return "x";
  });
}

/** The path's variants: literal segments in upper case, the first one capitalized, a trailing slash. */
function variants(template: string): string[] {
  const segments = template.split("/");
  const literal = (s: string) => !s.startsWith(":") && s !== "";
  const upper = segments.map((s) => (literal(s) ? s.toUpperCase() : s)).join("/");
  let done = false;
  const capital = segments
    .map((s) => {
      if (done || !literal(s) || !/[a-z]/.test(s[0] ?? "")) return s;
      done = true;
      return s[0]!.toUpperCase() + s.slice(1);
    })
    .join("/");
  const out = new Set<string>();
  for (const v of [upper, capital, `${template}/`, `${capital}/`, `${upper}/`]) {
    if (v !== template && v !== "//") out.add(concrete(v));
  }
  out.delete(concrete(template));
  return [...out];
}

test("variants: case and trailing slash of literal segments only", (t) => {
  t.deepEqual(variants("/console/runs/:id/cancel"), [
    `/CONSOLE/RUNS/${RUN}/CANCEL`,
    `/Console/runs/${RUN}/cancel`,
    `/console/runs/${RUN}/cancel/`,
    `/Console/runs/${RUN}/cancel/`,
    `/CONSOLE/RUNS/${RUN}/CANCEL/`,
  ]);
  t.deepEqual(variants("/"), []);
});

test("no case or trailing-slash variant of any route reaches a handler without credentials: 401, 403, 404 or 405 only", async (t) => {
  const limiter = { consume: async () => undefined };
  const routers = webRouters(rt, limiter, () => false);
  const routes: { path: string; methods: string[] }[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use() middleware, not a route
      const methods = layer.methods.filter((m) => m !== "HEAD" && m !== "OPTIONS");
      // router.all(): every method; GET, POST and DELETE stand for them
      routes.push({ path: String(layer.path), methods: methods.length > 6 ? ["GET", "POST", "DELETE"] : methods });
    }
  }
  const paths = new Set(routes.map((r) => r.path));
  for (const expected of ["/console/runs", "/console/runs/:id/cancel", "/console/runs/:id/slots/:alias/revoke", "/api/runs/:id", "/inbox", "/auth/logout", "/mcp", "/metrics"]) {
    t.true(paths.has(expected), `the walk found ${expected}`);
  }
  routes.push({ path: "/admin/queues", methods: ["GET"] }, { path: "/admin/queues/api/queues", methods: ["GET", "PUT"] });

  const failures: string[] = [];
  let asked = 0;
  for (const route of routes) {
    for (const path of variants(route.path)) {
      for (const method of route.methods) {
        const res = await fetch(new URL(path, cluster.baseUrl), {
          method,
          redirect: "manual",
          headers: method === "GET" ? {} : { "content-type": "application/x-www-form-urlencoded", origin: cluster.baseUrl },
          body: method === "GET" ? undefined : "csrf=x&reason=variant",
        });
        await res.arrayBuffer();
        asked++;
        if (![401, 403, 404, 405].includes(res.status)) failures.push(`${method} ${path} (route ${route.path}) → ${res.status}`);
      }
    }
  }
  t.true(asked > 100, `asked ${asked} variants`);
  t.deepEqual(failures, []);
  // nothing crashed on the way: no 500 was logged
  t.false(cluster.output().some((l) => /"status":5\d\d/.test(l) && !/"status":503/.test(l)), "no 5xx in the access log");
});

test("the console's handlers refuse 401 without the gate's state, and its exact paths still ask for credentials", async (t) => {
  for (const [method, path] of [["GET", "/console/runs"], ["POST", `/console/runs/${RUN}/cancel`], ["GET", `/CONSOLE/runs`], ["POST", `/Console/runs/${RUN}/cancel`]] as const) {
    const res = await fetch(new URL(path, cluster.baseUrl), { method, redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: method === "POST" ? "csrf=x&reason=y" : undefined });
    t.is(res.status, 401, `${method} ${path}`);
  }
});
