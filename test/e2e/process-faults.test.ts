/**
 * Process-level fault handlers (issue 8 item 10): an unhandled promise rejection is logged and the
 * process keeps serving; an uncaught exception is logged, in-flight requests are answered while
 * the process drains, and it exits with code 1 — never silently.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { ROOT } from "../helpers/server.js";

function startApp() {
  const child = spawn(process.execPath, ["--import=tsx", "test/fixtures/fault-handlers-app.ts"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let buffered = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const port = new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const parts = buffered.split("\n");
      buffered = parts.pop() ?? "";
      for (const l of parts) {
        lines.push(l);
        const m = /"port":(\d+).*"msg":"listening"/.exec(l);
        if (m) resolve(Number(m[1]));
      }
    });
    child.stderr.on("data", (chunk: Buffer) => lines.push(chunk.toString("utf8")));
    void exited.then((code) => reject(new Error(`exited with ${code}: ${lines.join("\n")}`)));
  });
  return { child, lines, exited, port };
}

const get = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
};

test("an unhandled promise rejection is logged and the process keeps serving", async (t) => {
  const app = startApp();
  const port = await app.port;
  try {
    t.is((await get(port, "/reject")).status, 200);
    t.is((await get(port, "/ok")).status, 200, "still serving after the rejection");
    t.is((await get(port, "/ok")).status, 200);
    const line = app.lines.find((l) => l.includes('"msg":"unhandled promise rejection; still serving"'));
    t.truthy(line, app.lines.join("\n"));
    t.true(line!.includes("nobody awaited me"));
    t.is(app.child.exitCode, null);
  } finally {
    app.child.kill("SIGKILL");
  }
});

test("an uncaught exception is logged, in-flight requests are answered while draining, and the process exits with code 1", async (t) => {
  const app = startApp();
  const port = await app.port;
  const slow = get(port, "/slow");
  t.is((await get(port, "/throw")).status, 200);
  t.deepEqual(await slow, { status: 200, text: "answered while draining" });
  t.is(await app.exited, 1);
  const fatal = app.lines.find((l) => l.includes('"msg":"uncaught exception; draining and exiting"'));
  t.truthy(fatal, app.lines.join("\n"));
  t.true(fatal!.includes("thrown from a timer"));
  t.true(fatal!.includes('"level":60'));
  t.true(app.lines.some((l) => l.includes('"msg":"drained"')), "the drain ran before the exit");
});
