/**
 * `SlotflowProblem` (issue 41 item 2; interfaces.md "The TypeScript SDK"): a refusal of the
 * slotflow HTTP API, thrown by `slotflow/client`, with the RFC 9457 members of the answer.
 *
 * `code` is typed as the union of the problem codes the server answers with — derived from the
 * engine's one list (src/engine/refusals.ts `RefusalCode`) by a type-only import, erased at run
 * time: this module loads nothing of the engine (.dependency-cruiser.cjs "sdk-client-fetch-only").
 */
import type { RefusalCode } from "../engine/refusals.js";

/** Every problem code the slotflow API answers with (`https://slotflow.dev/problems/<code>`). */
export type ProblemCode = RefusalCode;

/** The problem type URI prefix of slotflow's codes (src/web/problems.ts PROBLEM_BASE). */
const PROBLEM_BASE = "https://slotflow.dev/problems/";

/** An answer of 400 or above (or a body the client could not read as the API's answer). */
export class SlotflowProblem extends Error {
  override name = "SlotflowProblem";
  /** RFC 9457 `type`: `https://slotflow.dev/problems/<code>`, or `about:blank`. */
  readonly type: string;
  /** RFC 9457 `title`: the code's short title. */
  readonly title: string;
  /** RFC 9457 `status`: the HTTP status. */
  readonly status: number;
  /** RFC 9457 `detail`: what happened, for people. */
  readonly detail: string | undefined;
  /** RFC 9457 `instance`, when the server sent one. */
  readonly instance: string | undefined;
  /** slotflow's code; null for an `about:blank` problem (a request refused before any route) or a body that was not a problem. */
  readonly code: ProblemCode | null;
  /** Every member of the problem document (`reason`, `expects`, `errors`, `diagnostics`, `parameter`…). */
  readonly body: Readonly<Record<string, unknown>>;
  /** The request, for messages: method and path (a callback link's token is never in it). */
  readonly request: string;

  constructor(status: number, body: unknown, request: string) {
    const doc: Record<string, unknown> = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const type = typeof doc.type === "string" ? doc.type : "about:blank";
    const code = typeof doc.code === "string" ? doc.code : type.startsWith(PROBLEM_BASE) ? type.slice(PROBLEM_BASE.length) : null;
    const title = typeof doc.title === "string" ? doc.title : `HTTP ${status}`;
    const detail = typeof doc.detail === "string" ? doc.detail : undefined;
    super(`${request}: ${status}${code ? ` ${code}` : ""}: ${detail ?? title}`);
    this.type = type;
    this.title = title;
    this.status = typeof doc.status === "number" ? doc.status : status;
    this.detail = detail;
    this.instance = typeof doc.instance === "string" ? doc.instance : undefined;
    this.code = code as ProblemCode | null;
    this.body = doc;
    this.request = request;
  }
}

/** Thrown when no HTTP answer came back (refused, no such host, reset, aborted). */
export class SlotflowUnreachable extends Error {
  override name = "SlotflowUnreachable";
}
