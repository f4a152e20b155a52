/**
 * The MCP tools (issue 33 item 1; docs/agents.md): what an agent may do, each with a JSON Schema
 * for its input and its output and a description an agent can act on.
 *
 *   list_workflows                        the deployed workflows (built-ins included)
 *   start_run {workflow, input}           as POST /api/workflows/{name}/runs (engine client's start, src/engine-client/)
 *   get_run {runId}                       as GET /api/runs/{id} (showRunOr404: never a token)
 *   list_runs {…GET /api/runs filters}    operators/runs-list.ts parseRunsQuery + listRuns
 *   cancel_run {runId, reason}            as POST /api/runs/{id}/cancel (engine-client/cancel-reason.ts checkReason, then the engine client's cancel)
 *   request_approval {to, via?, title, details?, timeoutSeconds?, waitSeconds?}   starts slotflow.RequestApproval
 *   ask_human {to, via?, question, choices?, timeoutSeconds?, waitSeconds?}       starts slotflow.AskHuman
 *   get_answer {runId, waitSeconds?}      resumes the wait on such a run
 *
 * Every refusal is a tool error (`isError: true`) whose text is the problem as JSON,
 * `{code, detail, …}` with the code of the HTTP API's problem types (issue 33 item 4).
 *
 * Whose runs (issue 38 L5): every run an MCP tool starts is marked in `mcp_runs` before it is
 * submitted; a caller with SLOTFLOW_MCP_TOKEN (McpScope `"mcp-runs"`) sees, waits on and cancels only those.
 * A caller with a principal's token (McpScope `askedBy`) calls only request_approval, ask_human and
 * get_answer, and get_answer reaches only the questions it asked (mcp_runs.asked_by). Bad input
 * of request_approval / ask_human (a `to` that is neither an email address, an endpoint,
 * `role:NAME` nor `user:ID`; a `via` that is no slack-app endpoint; an oversized title, question or
 * choice) is refused before anything starts.
 *
 * Agents ask insiders (interfaces.md v0.5 "Answers people can trust", "Agents ask insiders"):
 * `to: "role:NAME"` / `"user:ID"` asks the principals with that role / that id — the built-in's
 * slot gets them as its `Candidates` (builtins.ts), so the question waits in their inbox and is
 * answered on its task page (and in Slack with `via`); no link is minted. The agent is named in
 * what people read (page heading, inbox, mail, message): its MCP client's name (`clientInfo.name`
 * of initialize; CallContext `agent`) and, when its token is a principal's, on whose behalf it asks
 * — see agentNaming.
 *
 * Waiting (issue 33 item 3): the answer is read from the run (PostgreSQL, views.ts showRun) once a
 * second; while waiting, a progress notification goes out every PROGRESS_MS when the client gave
 * a progressToken; when the client cancels or `waitSeconds` pass, the call returns
 * `{status: "waiting", runId}` and get_answer resumes. Nothing of the agent's conversation is
 * stored but what the tool was given (the question, its details, its choices, the address).
 */
import { isEmailAddress } from "../lang/runtime/email-address.js";
import { RefusalCode, RefusalError, refuse, type Refusal } from "../engine/refusals.js";
import type { RunView } from "../engine/views/views.js";
import { ENDPOINT_NAME } from "../endpoints/endpoints.js";
import { RUN_ID } from "../engine-client/client.js";
import { listRuns, parseRunsQuery } from "../operators/runs-list.js";
import type { Runtime } from "../runtime.js";
import { checkReason } from "../engine-client/cancel-reason.js";
import { engineClient } from "../engine-client/client.js";
import { showRunOr404, startedView, type Started } from "../engine-client/views.js";
import { dependency } from "../engine-client/dependency.js";
import { AGENT_CHARS, ASK_HUMAN, BUILTINS, INSIDER_CHARS, REQUEST_APPROVAL } from "./builtins.js";

/** Limits of the asking tools (docs/agents.md "Limits"). */
export const LIMITS = {
  titleChars: 200,
  detailsChars: 4000,
  questionChars: 4000,
  choices: 20,
  choiceChars: 200,
  /** timeoutSeconds: default 24 h, at most 30 days. */
  defaultTimeoutSeconds: 24 * 3600,
  maxTimeoutSeconds: 30 * 24 * 3600,
  /** waitSeconds: default 50, at most 600. */
  defaultWaitSeconds: 50,
  maxWaitSeconds: 600,
} as const;

/** A progress notification at least this often while a call waits (the contract: at least every 15 s). */
export const PROGRESS_MS = 10_000;
/** How often a waiting call reads the run. */
const POLL_MS = 1000;

type Json = Record<string, unknown>;

/** A tool as tools/list shows it. */
export interface ToolDef {
  name: string;
  description: string;
  inputSchema: Json & { type: "object" };
  outputSchema: Json & { type: "object" };
  /** `taskSupport: "optional"`: the tool may be called as an MCP task (tasks.ts). */
  execution?: { taskSupport: "optional" };
}

/** What a tool handler is given besides its arguments. */
export interface CallContext {
  /** Aborted when the client cancels the call (or the connection ends). */
  signal: AbortSignal;
  /** Sends a progress notification; absent when the client asked for none. */
  progress?: (progress: number, message: string) => Promise<void>;
  /** request_approval / ask_human only start the run (a task, tasks.ts): they return `waiting` at once. */
  noWait?: boolean;
  /** Whose runs the caller reaches (McpScope); absent: every run (the admin token, stdio). */
  scope?: McpScope;
  /**
   * Who asks (interfaces.md v0.5 "Agents ask insiders"): `clientName` the MCP client's own name
   * (initialize's `clientInfo.name`: self-declared, unchecked text), `onBehalfOf` the principal
   * whose token the agent holds (null for the admin token and SLOTFLOW_MCP_TOKEN, which are no
   * principal's). Absent: the agent is not named ("An AI agent").
   */
  agent?: AgentIdentity;
}

/**
 * Whose runs an MCP caller reaches (http.ts decides by its bearer token):
 * - `"all"`: the admin token, or stdio — every run, every tool;
 * - `"mcp-runs"`: SLOTFLOW_MCP_TOKEN — get_run, list_runs, cancel_run and get_answer (and the tasks)
 *   reach only runs started through MCP; any other run is not-found, as an unknown id (issue 38 L5);
 * - `{askedBy: ID}`: a principal's token (interfaces.md v0.5 "Agents ask insiders": the agent asks
 *   on that principal's behalf) — only PRINCIPAL_TOOLS; each run it starts is recorded with ID
 *   (mcp_runs.asked_by), and get_answer and its tasks reach only runs recorded with ID.
 */
export type McpScope = "all" | "mcp-runs" | { askedBy: string };

/** The tools a principal's token may call (McpScope `askedBy`): asking, and waiting for its own answers. */
export const PRINCIPAL_TOOLS: readonly string[] = ["request_approval", "ask_human", "get_answer"];

/** The tools tools/list shows a caller of `scope`: a principal's only PRINCIPAL_TOOLS. */
export function toolsFor(scope: McpScope | undefined): ToolDef[] {
  return typeof scope === "object" ? TOOLS.filter((t) => PRINCIPAL_TOOLS.includes(t.name)) : TOOLS;
}

/** Who asks, as CallContext `agent` says (see there). */
export interface AgentIdentity {
  clientName: string | null;
  onBehalfOf: { id: string; email: string | null } | null;
}

/** The tools that can run as an MCP task (tasks.ts): a run of a built-in is the task. */
export const TASK_TOOLS: readonly string[] = ["request_approval", "ask_human"];

const str = (description: string, extra: Json = {}) => ({ type: "string", description, ...extra });
const int = (description: string, extra: Json = {}) => ({ type: "integer", description, ...extra });
const runIdSchema = str("A run id (a UUID), as start_run, list_runs, request_approval or ask_human gave it.", { format: "uuid" });
const waitSchema = int(`How long this call blocks waiting for the answer, in seconds (default ${LIMITS.defaultWaitSeconds}, at most ${LIMITS.maxWaitSeconds}). When it passes, the call returns {status: "waiting", runId}: call get_answer to wait again.`, { minimum: 0, maximum: LIMITS.maxWaitSeconds });
const timeoutSchema = int(`How long the person has to answer, in seconds (default ${LIMITS.defaultTimeoutSeconds}, i.e. 24 h; at most ${LIMITS.maxTimeoutSeconds}). Past it the answer is {status: "expired"}.`, { minimum: 1, maximum: LIMITS.maxTimeoutSeconds });
const toSchema = str(
  `Who answers: an email address (a single-use link is mailed there); the name of an endpoint the operator set up (a Slack or Teams channel, a webhook; the link is posted there); "role:NAME" (every signed-in person with that role) or "user:ID" (that signed-in person only) — then no link is made: the question waits in their slotflow inbox and they answer on its task page (NAME / ID: 1–${INSIDER_CHARS} characters, no control characters, no surrounding spaces).`,
  { minLength: 1, maxLength: 320 },
);
const viaSchema = str('Only with to "role:NAME" or "user:ID": the name of a slack-app endpoint the operator set up; the question is also posted there, with buttons to answer it in Slack.', { minLength: 1, maxLength: 64 });

const answerOutput = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["answered", "waiting", "expired", "cancelled"], description: "answered: the person answered; waiting: not yet (call get_answer with runId); expired: the person did not answer in time; cancelled: an operator cancelled the run." },
    runId: { type: "string" },
    approved: { type: "boolean", description: "request_approval: the person's decision." },
    answer: { type: "string", description: "ask_human: the person's answer (one of choices when choices were given)." },
    comment: { type: ["string", "null"], description: "The person's optional comment." },
    answeredAt: { type: "string", description: "When the person answered (RFC 3339)." },
    answeredBy: {
      type: ["object", "null"],
      description: "Who answered: {via: \"link\"} through the link sent to `to` (for an address or an endpoint, the only way), or {via: \"principal\" | \"slack\", id, email} for a signed-in person (to \"role:NAME\" or \"user:ID\": on the task page, or in Slack).",
    },
  },
  required: ["status", "runId"],
} as const;

/** The tools, as tools/list shows them. */
export const TOOLS: ToolDef[] = [
  {
    name: "list_workflows",
    description: "Lists the workflows deployed on this slotflow server (name and current version), the built-ins slotflow.RequestApproval and slotflow.AskHuman included. Use a name with start_run or list_runs.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    outputSchema: {
      type: "object",
      properties: { workflows: { type: "array", items: { type: "object", properties: { name: { type: "string" }, currentVersion: { type: "integer" } }, required: ["name", "currentVersion"] } } },
      required: ["workflows"],
    },
  },
  {
    name: "start_run",
    description: "Starts a run of a deployed workflow with its input (an object of the workflow's parameters, checked against their types). Returns the run's id and where it stands. Refused with not-found for an unknown workflow and invalid-body for input that does not fit; nothing is started then.",
    inputSchema: {
      type: "object",
      properties: { workflow: str("The workflow's name (see list_workflows)."), input: { type: "object", description: "The run's input: one member per workflow parameter." } },
      required: ["workflow"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: { id: { type: "string" }, version: { type: "integer" }, state: { type: "string" }, status: { type: "string", description: "running, finished, cancelled, or accepted (queued; get_run shows it soon)." } },
      required: ["id", "status"],
    },
  },
  {
    name: "get_run",
    description: "Shows one run: its workflow, version, state, status, input, tracked rows, slots, incidents and history. Links and tokens are never shown.",
    inputSchema: { type: "object", properties: { runId: runIdSchema }, required: ["runId"], additionalProperties: false },
    outputSchema: {
      type: "object",
      properties: { id: { type: "string" }, workflow: { type: "string" }, version: { type: "integer" }, state: { type: "string" }, status: { type: "string" } },
      required: ["id", "workflow", "state", "status"],
    },
  },
  {
    name: "list_runs",
    description: "Lists runs, newest first, with the slots each waits on; filters combine with AND. Page with nextCursor.",
    inputSchema: {
      type: "object",
      properties: {
        workflow: str("Only runs of this workflow."),
        version: int("Only runs of this version.", { minimum: 1 }),
        status: { type: "string", enum: ["running", "finished", "cancelled"] },
        state: str("Only runs in this state."),
        waiting: str("Only runs with an open or waiting slot of this alias."),
        createdAfter: str("Only runs created after this instant (RFC 3339).", { format: "date-time" }),
        createdBefore: str("Only runs created before this instant (RFC 3339).", { format: "date-time" }),
        limit: int("At most this many runs (1–200, default 50).", { minimum: 1, maximum: 200 }),
        cursor: str("nextCursor of the previous page."),
      },
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: { runs: { type: "array", items: { type: "object" } }, nextCursor: { type: ["string", "null"] } },
      required: ["runs", "nextCursor"],
    },
  },
  {
    name: "cancel_run",
    description: "Cancels a running run, with a reason (1–500 characters) recorded in its history. Refused with run-finished when it already ended.",
    inputSchema: { type: "object", properties: { runId: runIdSchema, reason: str("Why (1–500 characters).", { minLength: 1, maxLength: 500 }) }, required: ["runId", "reason"], additionalProperties: false },
    outputSchema: { type: "object", properties: { id: { type: "string" }, status: { type: "string", enum: ["cancelled", "accepted"] } }, required: ["id", "status"] },
  },
  {
    name: "request_approval",
    description:
      "Asks a person to approve or decline something, and waits for the answer. A single-use link is sent to `to` (mailed to an address, or posted to an endpoint); or, with to \"role:NAME\" / \"user:ID\", the question waits in those people's slotflow inbox (and in Slack with `via`). The person answers on a web page (approve or decline, with an optional comment); the page names you (your MCP client's name). Returns {status: \"answered\", approved, comment, answeredAt} when the answer comes within waitSeconds, else {status: \"waiting\", runId}: then call get_answer {runId}. The link never reaches you. Use it as a permission prompt before an irreversible action.",
    inputSchema: {
      type: "object",
      properties: {
        to: toSchema,
        via: viaSchema,
        title: str(`What to approve, in one line (at most ${LIMITS.titleChars} characters): the page's heading and the mail's subject.`, { minLength: 1, maxLength: LIMITS.titleChars }),
        details: str(`What the person needs to decide (at most ${LIMITS.detailsChars} characters).`, { maxLength: LIMITS.detailsChars }),
        timeoutSeconds: timeoutSchema,
        waitSeconds: waitSchema,
      },
      required: ["to", "title"],
      additionalProperties: false,
    },
    outputSchema: answerOutput,
    execution: { taskSupport: "optional" },
  },
  {
    name: "ask_human",
    description:
      "Asks a person a question, and waits for the answer. A single-use link is sent to `to` (mailed to an address, or posted to an endpoint); or, with to \"role:NAME\" / \"user:ID\", the question waits in those people's slotflow inbox (and in Slack with `via`). The person answers on a web page (with choices, they pick one of them); the page names you (your MCP client's name). Returns {status: \"answered\", answer, comment, answeredAt} when the answer comes within waitSeconds, else {status: \"waiting\", runId}: then call get_answer {runId}. The link never reaches you.",
    inputSchema: {
      type: "object",
      properties: {
        to: toSchema,
        via: viaSchema,
        question: str(`The question (at most ${LIMITS.questionChars} characters).`, { minLength: 1, maxLength: LIMITS.questionChars }),
        choices: {
          type: "array",
          description: `The allowed answers (at most ${LIMITS.choices}, each 1–${LIMITS.choiceChars} characters, distinct); omit for a free answer.`,
          items: { type: "string", minLength: 1, maxLength: LIMITS.choiceChars },
          maxItems: LIMITS.choices,
        },
        timeoutSeconds: timeoutSchema,
        waitSeconds: waitSchema,
      },
      required: ["to", "question"],
      additionalProperties: false,
    },
    outputSchema: answerOutput,
    execution: { taskSupport: "optional" },
  },
  {
    name: "get_answer",
    description: "Waits for the answer of a request_approval or ask_human run (by its runId), as those tools do: returns the answer, {status: \"expired\"}, or {status: \"waiting\", runId} when waitSeconds pass first.",
    inputSchema: { type: "object", properties: { runId: runIdSchema, waitSeconds: waitSchema }, required: ["runId"], additionalProperties: false },
    outputSchema: answerOutput,
  },
];

const invalid = (detail: string, errors: { name: string; problem: string }[]) => new RefusalError(refuse(RefusalCode.InvalidBody, detail, { errors }));

/** Checks `args` is an object with only `allowed` members; returns it. */
function argsOf(args: unknown, allowed: string[]): Json {
  const a = args ?? {};
  if (typeof a !== "object" || Array.isArray(a)) throw invalid("The arguments must be an object.", []);
  const unknown = Object.keys(a).filter((k) => !allowed.includes(k));
  if (unknown.length) throw invalid(`Unknown argument(s) ${unknown.map((k) => JSON.stringify(k.slice(0, 64))).join(", ")}: this tool takes ${allowed.join(", ")}.`, unknown.map((name) => ({ name, problem: "is not an argument of this tool" })));
  return a as Json;
}

/** A string argument of 1..max characters after trimming (or undefined when optional and absent). */
function text(a: Json, name: string, max: number, optional = false): string | undefined {
  const v = a[name];
  if (v === undefined && optional) return undefined;
  const problem = `must be a string of 1 to ${max} characters`;
  if (typeof v !== "string" || !v.trim()) throw invalid(`${name} ${v === undefined ? "is required" : problem}.`, [{ name, problem }]);
  if (v.length > max) throw invalid(`${name} is ${v.length} characters long; at most ${max} are allowed.`, [{ name, problem }]);
  if (v.includes("\u0000")) throw invalid(`${name} must not contain U+0000.`, [{ name, problem: "contains U+0000" }]);
  return v.trim();
}

/** An integer argument within [min, max], or `dflt` when absent. */
function integer(a: Json, name: string, min: number, max: number, dflt: number): number {
  const v = a[name];
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) throw invalid(`${name} must be an integer from ${min} to ${max}.`, [{ name, problem: `must be an integer from ${min} to ${max}` }]);
  return v;
}

/**
 * Who a built-in asks (its `ask` row's fields): an email address or an endpoint (`channel`
 * "email" / "endpoint": the link goes there), or a role or a user (`channel` "role" / "user": the
 * slot's `Candidates`, no link; `via` a slack-app endpoint that also posts the question).
 */
interface Recipient {
  recipient: string;
  channel: "email" | "endpoint" | "role" | "user";
  role: string | null;
  user: string | null;
  via: string | null;
}

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Checks `to` and `via` (interfaces.md "Agents ask people": an email address or an endpoint name;
 * v0.5 "Agents ask insiders": `role:NAME` or `user:ID`, with `via` a slack-app endpoint):
 * - `role:NAME` / `user:ID`: NAME / ID of 1–INSIDER_CHARS characters, no control character (no
 *   principal can hold one: auth/principal.ts checkedPrincipal), no surrounding spaces;
 * - an email address by the language's isEmailAddress (the rule `send email` enforces), within
 *   SLOTFLOW_MCP_MAIL_DOMAINS when set;
 * - else the name of an endpoint that exists and is not disabled (`slotflow endpoint set`;
 *   webhook, slack, teams — the link goes there with `send message`).
 * `via` is taken only with a role or a user, and must name a slack-app endpoint that exists and is
 * not disabled. Anything else is refused invalid-body naming `to` or `via` and what was expected,
 * before anything starts.
 */
async function recipient(rt: Runtime, a: Json): Promise<Recipient> {
  const to = text(a, "to", 320)!;
  const insider = /^(role|user):/.exec(to);
  const via = a.via === undefined ? null : text(a, "via", 64)!;
  if (insider) {
    const kind = insider[1] as "role" | "user";
    const name = to.slice(kind.length + 1);
    const what = kind === "role" ? "a role name" : "a user id";
    const problem = `must be "${kind}:" followed by ${what} of 1 to ${INSIDER_CHARS} characters, without control characters or surrounding spaces`;
    if (!name || name.length > INSIDER_CHARS || CONTROL.test(name) || name.trim() !== name) throw invalid(`to ${problem}.`, [{ name: "to", problem }]);
    return { recipient: to, channel: kind, role: kind === "role" ? name : null, user: kind === "user" ? name : null, via: via === null ? null : await slackAppOr400(rt, via) };
  }
  if (via !== null) throw invalid('via is taken only with to "role:NAME" or "user:ID": a link sent to an address or an endpoint goes there alone.', [{ name: "via", problem: 'is taken only with to "role:NAME" or "user:ID"' }]);
  if (isEmailAddress(to)) {
    mailDomainOr400(rt, to);
    return { recipient: to, channel: "email", role: null, user: null, via: null };
  }
  const neither = (detail: string) => invalid(detail, [{ name: "to", problem: 'is neither an email address, an endpoint name, "role:NAME" nor "user:ID"' }]);
  if (!ENDPOINT_NAME.test(to)) throw neither('to must be an email address (one plain address, like person@example.com), "role:NAME", "user:ID" or the name of an endpoint.');
  const endpoint = await dependency(rt.log, "database", () => rt.db.endpoint.findUnique({ where: { name: to }, select: { name: true, disabledAt: true, disabledReason: true } }));
  if (!endpoint) throw neither(`"${to}" is not an email address, "role:NAME" or "user:ID", and no endpoint is named so (an operator sets endpoints with 'slotflow endpoint set').`);
  if (endpoint.disabledAt) {
    throw invalid(`The endpoint "${to}" is disabled (${endpoint.disabledReason ?? "by its failures"}): an operator re-enables it with 'slotflow endpoint set'.`, [{ name: "to", problem: "names a disabled endpoint" }]);
  }
  return { recipient: endpoint.name, channel: "endpoint", role: null, user: null, via: null };
}

/** `via`: the name of a slack-app endpoint that exists and is not disabled (else 422 naming `via`). */
async function slackAppOr400(rt: Runtime, via: string): Promise<string> {
  const problem = "must name a slack-app endpoint that is not disabled";
  const refused = (detail: string) => invalid(detail, [{ name: "via", problem }]);
  if (!ENDPOINT_NAME.test(via)) throw refused("via must be the name of a slack-app endpoint (docs/slack.md).");
  const endpoint = await dependency(rt.log, "database", () => rt.db.endpoint.findUnique({ where: { name: via }, select: { name: true, kind: true, disabledAt: true } }));
  if (!endpoint) throw refused(`via: no endpoint is named "${via}" (an operator sets a slack-app endpoint with PUT /api/endpoints/{name}).`);
  if (endpoint.kind !== "slack-app") throw refused(`via: the endpoint "${via}" is a ${endpoint.kind} endpoint; via must name a slack-app endpoint, whose messages carry answer buttons.`);
  if (endpoint.disabledAt) throw refused(`via: the endpoint "${via}" is disabled; an operator re-enables it.`);
  return endpoint.name;
}

/** The longest client name and principal id or email shown (each; agentNaming). */
const NAME_CHARS = 80;

/** `v` as one line of at most `max` characters: control characters and runs of spaces become one space. */
function oneLine(v: string, max: number): string {
  const line = v.replace(new RegExp(CONTROL.source, "g"), " ").replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * How pages, the inbox, mails and messages name the agent that asks (interfaces.md v0.5 "Agents
 * ask insiders"), the subject of "… asks for your approval": `The AI agent “NAME”` and, when its
 * token is a principal's, `, on behalf of ID (EMAIL),` — or null when nothing is known (the
 * built-ins then say "An AI agent"). NAME, ID and EMAIL are client-controlled text: each is cut to
 * NAME_CHARS characters on one line (no control characters); pages escape it when they show it.
 * At most AGENT_CHARS characters (builtins.ts).
 */
export function agentNaming(agent: AgentIdentity | undefined): string | null {
  const name = agent?.clientName ? oneLine(agent.clientName, NAME_CHARS) : "";
  const who = agent?.onBehalfOf;
  if (!name && !who) return null;
  const head = name ? `The AI agent “${name}”` : "An AI agent";
  if (!who) return head;
  const id = oneLine(who.id, NAME_CHARS);
  const email = who.email ? oneLine(who.email, NAME_CHARS) : "";
  return `${head}, on behalf of ${id}${email && email !== id ? ` (${email})` : ""},`.slice(0, AGENT_CHARS);
}

/**
 * SLOTFLOW_MCP_MAIL_DOMAINS (issue 38 L5): when set, an agent may mail only addresses whose domain
 * (after the last `@`, case-insensitive) is one of them, exactly — a subdomain is another domain.
 * Anything else is refused invalid-body naming `to` and the rule, before anything starts.
 */
function mailDomainOr400(rt: Runtime, address: string): void {
  const allowed = rt.config.mcpMailDomains;
  if (allowed === null) return;
  const domain = address.slice(address.lastIndexOf("@") + 1).toLowerCase();
  if (allowed.includes(domain)) return;
  throw invalid(`to: this server lets agents mail only addresses at ${allowed.join(", ")} (SLOTFLOW_MCP_MAIL_DOMAINS); ${JSON.stringify(domain.slice(0, 253))} is not one of them.`, [{ name: "to", problem: "is outside SLOTFLOW_MCP_MAIL_DOMAINS" }]);
}

/**
 * start_run of a built-in (slotflow.RequestApproval / slotflow.AskHuman) mails `ask.recipient`
 * unless `ask.channel` is "endpoint": the same SLOTFLOW_MCP_MAIL_DOMAINS rule as request_approval.
 */
function builtinMailOr400(rt: Runtime, workflow: string, input: unknown): void {
  if (rt.config.mcpMailDomains === null || !BUILTINS.some((b) => b.name === workflow)) return;
  const ask = (input as { ask?: { recipient?: unknown; channel?: unknown } } | null)?.ask;
  if (ask?.channel === "endpoint" || ask?.channel === "role" || ask?.channel === "user" || typeof ask?.recipient !== "string") return; // the workflow's own input checks refuse a missing recipient
  mailDomainOr400(rt, ask.recipient);
}

/**
 * Marks `runId` as started through MCP (table mcp_runs), before its start is submitted; `askedBy`:
 * the principal whose token started it (McpScope), else null.
 */
export async function markMcpRun(rt: Runtime, runId: string, askedBy: string | null = null): Promise<void> {
  await dependency(rt.log, "database", () => rt.db.mcpRun.create({ data: { runId, askedBy } }));
}

/**
 * For a limited caller (McpScope): not-found — the words of an unknown id — unless `runId` was
 * started through MCP (`"mcp-runs"`) or, for a principal, asked by that principal. Otherwise nothing.
 */
export async function mcpRunOr404(rt: Runtime, runId: string, scope: McpScope | undefined): Promise<void> {
  if (scope === undefined || scope === "all") return;
  const marked = RUN_ID.test(runId) ? await dependency(rt.log, "database", () => rt.db.mcpRun.findUnique({ where: { runId: runId.toLowerCase() }, select: { askedBy: true } })) : null;
  if (!marked || (typeof scope === "object" && marked.askedBy !== scope.askedBy)) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
}

/**
 * A principal's token (McpScope `askedBy`) calls only PRINCIPAL_TOOLS: any other tool is refused
 * `unauthorized` (the token does not authorize the tool), saying why, before its arguments are read.
 */
function toolAllowedOr401(name: string, scope: McpScope | undefined): void {
  if (typeof scope !== "object" || PRINCIPAL_TOOLS.includes(name)) return;
  throw new RefusalError(
    refuse(
      RefusalCode.Unauthorized,
      `${JSON.stringify(name.slice(0, 64))} is not offered to a principal's token: an agent holding a person's token may only ask on their behalf (${PRINCIPAL_TOOLS.join(", ")}); the other tools need SLOTFLOW_MCP_TOKEN or the admin token.`,
    ),
  );
}

/** The answer of a built-in run as its view shows it, or null while it waits (issue 33 item 3). */
export function answerOf(view: RunView): Json | null {
  const builtin = BUILTINS.find((b) => b.name === view.workflow);
  if (!builtin) return null;
  const runId = view.id;
  if (view.status === "cancelled") return { status: "cancelled", runId };
  if (view.state === "Expired") return { status: "expired", runId };
  if (view.state !== "Answered") return null;
  const ask = (view.entities.ask ?? {}) as Json;
  const slot = view.slots.find((s) => s.alias === builtin.alias && s.status === "completed");
  const answeredAt = slot?.closedAt instanceof Date ? slot.closedAt.toISOString() : String(slot?.closedAt ?? "");
  const comment = typeof ask.comment === "string" ? ask.comment : null;
  // who answered (the slot's answeredBy): an agent can tell the link's holder from anyone else
  const answeredBy = (slot?.answeredBy ?? null) as Json | null;
  return builtin.name === REQUEST_APPROVAL
    ? { status: "answered", runId, approved: ask.approved === true, comment, answeredAt, answeredBy }
    : { status: "answered", runId, answer: String(ask.answer ?? ""), comment, answeredAt, answeredBy };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/**
 * Waits up to `waitSeconds` for the answer of built-in run `runId`, reading it from PostgreSQL
 * once a second; sends progress every PROGRESS_MS. Refuses (not-found) a run that is not one of
 * request_approval / ask_human.
 */
async function waitForAnswer(rt: Runtime, runId: string, waitSeconds: number, ctx: CallContext): Promise<Json> {
  await mcpRunOr404(rt, runId, ctx.scope);
  const until = Date.now() + waitSeconds * 1000;
  let nextProgress = Date.now() + PROGRESS_MS;
  let beats = 0;
  for (;;) {
    const view = await showRunOr404(rt, runId);
    if (!BUILTINS.some((b) => b.name === view.workflow)) {
      throw new RefusalError(refuse(RefusalCode.NotFound, "This run was not started by request_approval or ask_human: use get_run."));
    }
    const answer = answerOf(view);
    if (answer) return answer;
    const now = Date.now();
    if (ctx.signal.aborted) {
      // over HTTP: the client closed the request; over stdio: it sent notifications/cancelled (the SDK then drops the result)
      rt.log.info({ runId: view.id }, "mcp: the caller went away while waiting; the run keeps waiting and get_answer resumes");
      return { status: "waiting", runId: view.id };
    }
    if (now >= until) return { status: "waiting", runId: view.id };
    if (ctx.progress && now >= nextProgress) {
      beats += 1;
      nextProgress = now + PROGRESS_MS;
      // the run id in every notification: a client that gives up before the result can still call get_answer
      await ctx.progress(beats, `Waiting for the person's answer on run ${view.id} (${Math.round((until - now) / 1000)} s left in this call; get_answer {runId} waits again).`).catch(() => undefined);
    }
    await sleep(Math.min(POLL_MS, until - now, Math.max(0, nextProgress - now)), ctx.signal);
  }
}

/**
 * Starts a run as `POST /api/workflows/{name}/runs` does (the engine client's start: 404, 422,
 * 413, then the start command), marked as started through MCP before it is submitted; throws
 * RefusalError for every refusal, nothing started then.
 */
async function startRun(rt: Runtime, workflow: string, input: unknown, scope: McpScope | undefined): Promise<Started> {
  const askedBy = typeof scope === "object" ? scope.askedBy : null;
  const result = await engineClient(rt).start(workflow, input, (runId) => markMcpRun(rt, runId, askedBy));
  if (result.kind === "refused") throw new RefusalError(result.refusal);
  return startedView(result);
}

/** Starts a built-in run, then waits for its answer. */
async function ask(rt: Runtime, workflow: string, input: Json, waitSeconds: number, ctx: CallContext): Promise<Json> {
  const started = await startRun(rt, workflow, { ask: input }, ctx.scope);
  rt.log.info({ runId: started.id, workflow }, "mcp: asked a person");
  return waitForAnswer(rt, started.id, ctx.noWait ? 0 : waitSeconds, ctx);
}

const answerBy = (timeoutSeconds: number) => new Date(Date.now() + timeoutSeconds * 1000).toISOString();

/** Runs tool `name`; throws RefusalError for a refusal (the server turns it into a tool error). */
export async function callTool(rt: Runtime, name: string, rawArgs: unknown, ctx: CallContext): Promise<Json> {
  toolAllowedOr401(name, ctx.scope);
  switch (name) {
    case "list_workflows": {
      argsOf(rawArgs, []);
      const rows = await dependency(rt.log, "database", () => rt.db.workflow.findMany({ select: { name: true, currentVersion: true }, orderBy: { name: "asc" } }));
      return { workflows: rows };
    }
    case "start_run": {
      const a = argsOf(rawArgs, ["workflow", "input"]);
      const workflow = text(a, "workflow", 209)!;
      builtinMailOr400(rt, workflow, a.input);
      return await startRun(rt, workflow, a.input === undefined ? {} : a.input, ctx.scope);
    }
    case "get_run": {
      const a = argsOf(rawArgs, ["runId"]);
      const runId = text(a, "runId", 64)!;
      await mcpRunOr404(rt, runId, ctx.scope);
      return (await showRunOr404(rt, runId)) as unknown as Json;
    }
    case "list_runs": {
      const keys = ["workflow", "version", "status", "state", "waiting", "createdAfter", "createdBefore", "limit", "cursor"];
      const a = argsOf(rawArgs, keys);
      const query: Record<string, string> = {};
      for (const k of keys) if (a[k] !== undefined && a[k] !== null) query[k] = String(a[k]);
      const filter = { ...parseRunsQuery(query), ...(ctx.scope === "mcp-runs" ? { startedThroughMcp: true } : {}) };
      const page = await dependency(rt.log, "database", () => listRuns(rt.db, filter));
      return JSON.parse(JSON.stringify(page)) as Json;
    }
    case "cancel_run": {
      const a = argsOf(rawArgs, ["runId", "reason"]);
      const runId = text(a, "runId", 64)!;
      const reason = checkReason(a.reason);
      await mcpRunOr404(rt, runId, ctx.scope);
      const result = await engineClient(rt).cancel(runId, reason, "mcp");
      if (result.kind === "refused") throw new RefusalError(result.refusal);
      if (result.kind === "accepted") return { id: result.runId, status: "accepted" };
      return { id: result.run.id, status: "cancelled" };
    }
    case "request_approval": {
      const a = argsOf(rawArgs, ["to", "via", "title", "details", "timeoutSeconds", "waitSeconds"]);
      const to = await recipient(rt, a);
      const title = text(a, "title", LIMITS.titleChars)!;
      const details = text(a, "details", LIMITS.detailsChars, true) ?? null;
      const timeout = integer(a, "timeoutSeconds", 1, LIMITS.maxTimeoutSeconds, LIMITS.defaultTimeoutSeconds);
      const wait = integer(a, "waitSeconds", 0, LIMITS.maxWaitSeconds, LIMITS.defaultWaitSeconds);
      return ask(rt, REQUEST_APPROVAL, { ...to, agent: agentNaming(ctx.agent), title, details, answerBy: answerBy(timeout), approved: null, comment: null }, wait, ctx);
    }
    case "ask_human": {
      const a = argsOf(rawArgs, ["to", "via", "question", "choices", "timeoutSeconds", "waitSeconds"]);
      const to = await recipient(rt, a);
      const question = text(a, "question", LIMITS.questionChars)!;
      const choices = choicesOf(a.choices);
      const timeout = integer(a, "timeoutSeconds", 1, LIMITS.maxTimeoutSeconds, LIMITS.defaultTimeoutSeconds);
      const wait = integer(a, "waitSeconds", 0, LIMITS.maxWaitSeconds, LIMITS.defaultWaitSeconds);
      // the page offers choices as radio buttons (builtins.ts completeBuiltin); a mail or message lists them
      const intro = choices.length ? `Answer with one of: ${choices.map((c) => `“${c}”`).join(", ")}.` : null;
      return ask(rt, ASK_HUMAN, { ...to, agent: agentNaming(ctx.agent), question, choices, intro, answerBy: answerBy(timeout), answer: null, comment: null }, wait, ctx);
    }
    case "get_answer": {
      const a = argsOf(rawArgs, ["runId", "waitSeconds"]);
      const runId = text(a, "runId", 64)!;
      const wait = integer(a, "waitSeconds", 0, LIMITS.maxWaitSeconds, LIMITS.defaultWaitSeconds);
      return waitForAnswer(rt, runId, wait, ctx);
    }
    default:
      throw new RefusalError(refuse(RefusalCode.NotFound, `No tool is named "${name.slice(0, 64)}"; tools/list lists them.`));
  }
}

/** ask_human's choices: absent, or an array of at most 20 distinct strings of 1–200 characters. */
function choicesOf(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const problem = `must be an array of at most ${LIMITS.choices} distinct strings of 1 to ${LIMITS.choiceChars} characters`;
  const bad = () => invalid(`choices ${problem}.`, [{ name: "choices", problem }]);
  if (!Array.isArray(v) || v.length > LIMITS.choices) throw bad();
  const out = v.map((c) => (typeof c === "string" ? c.trim() : ""));
  if (out.some((c) => !c || c.length > LIMITS.choiceChars || c.includes("\u0000")) || new Set(out).size !== out.length) throw bad();
  return out;
}

/** A refusal as a tool error's content: the problem as JSON (`code`, `detail`, and its extra members). */
export function problemText(refusal: Refusal | RefusalError): string {
  const code = refusal.code;
  const detail = refusal instanceof RefusalError ? refusal.message : refusal.detail;
  const extra = refusal instanceof RefusalError ? refusal.extra : (refusal.extra ?? {});
  return JSON.stringify({ code, detail, ...extra });
}
