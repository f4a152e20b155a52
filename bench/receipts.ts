/**
 * `npm run bench -- receipts [n=5000]`: what a receipt adds to a completing deposit (v0.4
 * "Receipts"), in process, on the worker's side: the RFC 8785 canonical JSON and SHA-256 of the
 * body, then the ES256 compact JWS (jose) — `signReceipt`, exactly as the step calls it — and, for
 * comparison, what verifying one costs anyone who checks it. Prints µs per receipt (wall, and CPU
 * as user+system from process.cpuUsage), the JWS's size in bytes, and the same for the hash alone.
 * No PostgreSQL or Redis: the receipt is made in memory before the step's one write, and stored in
 * that write (slots.receipt), so it adds no round trip. Not a test.
 */
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, jwtVerify } from "jose";
import { importReceiptKey } from "../src/engine/receipts/keys.js";
import { bodySha256, signReceipt, type ReceiptFacts } from "../src/engine/receipts/sign.js";

const n = Number(process.argv[2] ?? 5000);
const { privateKey } = await generateKeyPair("ES256", { extractable: true });
const key = await importReceiptKey(JSON.stringify(await exportJWK(privateKey)), 1);
const facts = (i: number): ReceiptFacts => ({
  runId: randomUUID(),
  alias: "decision",
  element: i % 3,
  state: "Review",
  visit: 1,
  workflow: "VendorApproval",
  version: 3,
  event: "Approve",
  body: { ok: true, note: `Bank details verified (${i})`, amounts: [1200, 80.5], at: "2026-11-26T10:00:00.000Z" },
  answeredBy: { via: "link" },
});

async function measure(label: string, fn: (i: number) => Promise<unknown> | unknown): Promise<void> {
  for (let i = 0; i < Math.min(500, n); i++) await fn(i); // warm-up
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1000 / n;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / n;
  console.log(`${label.padEnd(44)} ${wallUs.toFixed(1).padStart(8)} µs wall ${cpuUs.toFixed(1).padStart(8)} µs CPU`);
}

const sample = await signReceipt(key, "https://slotflow.example", facts(0), new Date());
console.log(`receipts: n=${n}, node ${process.version}; a receipt is ${Buffer.byteLength(sample)} bytes`);
await measure("body hash (RFC 8785 + SHA-256)", (i) => bodySha256(facts(i).body));
await measure("receipt (hash + ES256 compact JWS, jose)", (i) => signReceipt(key, "https://slotflow.example", facts(i), new Date()));
const publicKey = await importJWK(key.publicJwk, "ES256");
await measure("verify one (jose jwtVerify, ES256)", () => jwtVerify(sample, publicKey, { algorithms: ["ES256"] }));
