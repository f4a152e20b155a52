/**
 * The body of the compiler's worker thread (compile-async.ts starts it). Each message
 * `{ id, source, file }` is compiled and answered `{ id, diagnostics, workflow }`; the syntax tree
 * stays here (a deploy does not need it, and it is the largest part of a result).
 */
import { parentPort } from "node:worker_threads";
import { compile } from "./compile.js";

interface Request {
  id: number;
  source: string;
  file: string;
}

parentPort!.on("message", ({ id, source, file }: Request) => {
  const { diagnostics, workflow } = compile(source, file);
  parentPort!.postMessage({ id, diagnostics, workflow });
});
