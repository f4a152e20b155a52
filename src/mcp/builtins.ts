/**
 * The built-in workflows `slotflow.RequestApproval` and `slotflow.AskHuman` (issue 33 item 2): an
 * agent asks a person through the MCP tools request_approval and ask_human (tools.ts), which start
 * runs of these like any start (the engine client's start, src/engine-client/client.ts). Each has one slot whose link is
 * minted in its state's `enter` and sent to `recipient`: mailed to an address (`channel` null or
 * "email"), or posted with `send message` to the endpoint named `recipient` (`channel`
 * "endpoint": webhook, slack or teams, src/endpoints). The person answers on the responder page
 * (or POSTs JSON to the link) — only through the link: the slot has no `Candidates`, so since v0.5
 * no signed-in principal may answer it (lang/slot-access.ts; issue 38 M2); the answer is kept on
 * the run's tracked row `ask`, so it is read
 * back from PostgreSQL (tools.ts answerOf) by whichever process asks, after any restart.
 *
 * Names: a source declares an identifier (no dot); these are deployed under `slotflow.` + their
 * source name (deploy.ts `name`), a prefix no user source can take. They are deployed by every
 * start of a process serving HTTP (`slotflow serve`, `slotflow web`; cli/server.ts), by
 * `slotflow migrate` and by `slotflow mcp` (stdio.ts) — not by a worker or sweeper alone, which
 * keep no compiler (issue 22 item 3) — versioned like any workflow: a changed source here becomes
 * the next version, an unchanged one changes nothing.
 *
 * Two things no `.flow` source can say are added to their compiled form by `completeBuiltin`: the
 * endpoint of `send message` taken from the run (a source names its endpoint with a literal), and
 * the allowed answers of AskHuman's `answer` taken from the run's `ask.choices`, which the
 * responder page shows as radio buttons (the language has no enumeration type). The slot's
 * `Requires` admits only one of `choices` when there are any, for a POSTed answer too; its
 * refusal says so in the author's wording (`Requires … else`).
 */
import { createHash } from "node:crypto";
import type { EndpointRef, Expr, Range } from "../lang/ast.js";
import { compileOffThread } from "../lang/compile-async.js";
import type { CompiledWorkflow } from "../lang/compiled.js";
import type { Db } from "../db.js";
import type { UpgradeServices } from "../engine/commands/upgrade.js";
import { announceDeploy, type Runtime } from "../runtime.js";

/** The prefix reserved for built-in workflows. */
export const BUILTIN_PREFIX = "slotflow.";
export const REQUEST_APPROVAL = "slotflow.RequestApproval";
export const ASK_HUMAN = "slotflow.AskHuman";

/**
 * The longest role name or user id an agent may ask (`to: "role:NAME"` or `"user:ID"`, tools.ts),
 * and the longest naming of the agent (tools.ts agentNaming: its client's name and on whose behalf).
 */
export const INSIDER_CHARS = 200;
export const AGENT_CHARS = 400;
/**
 * The `Candidates` entry of a run asked of no role (or no user): a name no principal can have — it
 * holds a control character, and a principal whose id or role holds one is refused (auth/principal.ts
 * checkedPrincipal) — so a question sent by mail or to an endpoint stays answerable only through
 * its link, as before (written with the language's escape for U+0001).
 */
const NOBODY = "\\u{1}nobody";

/** The source of slotflow.RequestApproval. */
export const REQUEST_APPROVAL_SOURCE = `// slotflow.RequestApproval — built in (docs/agents.md): an agent asks a person to approve something.
// The MCP tool request_approval starts it; the link goes to the person by mail, or through an endpoint;
// asked of a role or a user (channel "role" / "user"), no link: the question waits in their inbox
// (and in Slack when \`via\` names a slack-app endpoint).
// Revision 4 (change this line with any change of completeBuiltin in src/mcp/builtins.ts).
workflow RequestApproval(ask: Approval)

entity Approval {
  recipient: string @minLength(1) @maxLength(320)
  channel: string? @maxLength(16)
  role: string? @maxLength(${INSIDER_CHARS})
  user: string? @maxLength(${INSIDER_CHARS})
  via: string? @maxLength(64)
  agent: string? @maxLength(${AGENT_CHARS})
  title: string @minLength(1) @maxLength(200)
  details: string? @maxLength(4000)
  answerBy: datetime
  approved: bool?
  comment: string? @maxLength(4000)
}

event Answer(
  approved: bool @label("Do you approve?"),
  comment: string? @label("Comment") @help("Optional: a note for the agent that asked.") @multiline @maxLength(4000),
)

initial state Waiting {
  subscribe Answer(approved, comment) as answer {
    Candidates: role(ask.role ?? "${NOBODY}"), user(ask.user ?? "${NOBODY}")
    Deadline: ask.answerBy
    Title: (ask.agent ?? "An AI agent") + " asks for your approval: " + ask.title
    Intro: (ask.agent ?? "An AI agent") + " asks for your approval. The agent wrote the heading above and the text below; slotflow passes them on as they are.\\n\\nThe agent wrote:\\n" + (ask.details ?? "(no details)")
  }

  enter {
    if (ask.channel == "endpoint") {
      send message to "{ask.recipient}" {
        text: (ask.agent ?? "An AI agent") + " asks for your approval. The agent wrote:\\n\\n" + ask.title + "\\n\\n" + (ask.details ?? "") + "\\n\\n(end of the agent's text)"
        link: answer.CallbackUrl()
        label: "Open to answer (the link works once)"
      }
    } else if (ask.channel == "role" || ask.channel == "user") {
      if (ask.via != null) {
        send message to "{ask.via}" {
          text: (ask.agent ?? "An AI agent") + " asks for your approval. The agent wrote:\\n\\n" + ask.title + "\\n\\n" + (ask.details ?? "") + "\\n\\n(end of the agent's text)"
          answer: answer
        }
      }
    } else {
      send email to ask.recipient {
        subject: (ask.agent ?? "An AI agent") + " asks for your approval: " + ask.title
        body: (ask.agent ?? "An AI agent") + " asks for your approval. What follows is the agent's own text, passed on as it is.\\n\\nThe agent wrote:\\n\\n" + ask.title + "\\n\\n" + (ask.details ?? "") + "\\n\\n(end of the agent's text)\\n\\nOpen this link to answer (it works once): " + answer.CallbackUrl()
      }
    }
  }

  on answer(approved, comment) {
    ask.approved = approved
    ask.comment = comment
    default -> Answered
  }

  on answer.expired -> Expired
}

terminal state Answered
terminal state Expired
`;

/** The source of slotflow.AskHuman. */
export const ASK_HUMAN_SOURCE = `// slotflow.AskHuman — built in (docs/agents.md): an agent asks a person a question.
// The MCP tool ask_human starts it; the link goes to the person by mail, or through an endpoint;
// asked of a role or a user (channel "role" / "user"), no link: the question waits in their inbox
// (and in Slack when \`via\` names a slack-app endpoint).
// With choices, the page offers them as radio buttons and the answer must be one of them.
// Revision 4 (change this line with any change of completeBuiltin in src/mcp/builtins.ts).
workflow AskHuman(ask: Question)

entity Question {
  recipient: string @minLength(1) @maxLength(320)
  channel: string? @maxLength(16)
  role: string? @maxLength(${INSIDER_CHARS})
  user: string? @maxLength(${INSIDER_CHARS})
  via: string? @maxLength(64)
  agent: string? @maxLength(${AGENT_CHARS})
  question: string @minLength(1) @maxLength(4000)
  choices: list<string>
  intro: string? @maxLength(8000)
  answerBy: datetime
  answer: string?
  comment: string? @maxLength(4000)
}

event Reply(
  answer: string @label("Your answer") @multiline @minLength(1) @maxLength(4000),
  comment: string? @label("Comment") @help("Optional: a note for the agent that asked.") @multiline @maxLength(4000),
)

initial state Waiting {
  subscribe Reply(answer, comment) as reply {
    Candidates: role(ask.role ?? "${NOBODY}"), user(ask.user ?? "${NOBODY}")
    Deadline: ask.answerBy
    Requires: len(ask.choices) == 0 || contains(ask.choices, answer) else "Answer with one of the choices listed above."
    Title: (ask.agent ?? "An AI agent") + " asks: " + ask.question
    Intro: (ask.agent ?? "An AI agent") + " asks you this. The agent wrote the question above; slotflow passes it on as it is.\\n\\n" + (ask.intro ?? "")
  }

  enter {
    if (ask.channel == "endpoint") {
      send message to "{ask.recipient}" {
        text: (ask.agent ?? "An AI agent") + " asks you a question. The agent wrote:\\n\\n" + ask.question + "\\n\\n(end of the agent's text)\\n\\n" + (ask.intro ?? "")
        link: reply.CallbackUrl()
        label: "Open to answer (the link works once)"
      }
    } else if (ask.channel == "role" || ask.channel == "user") {
      if (ask.via != null) {
        send message to "{ask.via}" {
          text: (ask.agent ?? "An AI agent") + " asks you a question. The agent wrote:\\n\\n" + ask.question + "\\n\\n(end of the agent's text)\\n\\n" + (ask.intro ?? "")
          answer: reply
        }
      }
    } else {
      send email to ask.recipient {
        subject: (ask.agent ?? "An AI agent") + " asks you: " + ask.question
        body: (ask.agent ?? "An AI agent") + " asks you a question. What follows is the agent's own text, passed on as it is.\\n\\nThe agent wrote:\\n\\n" + ask.question + "\\n\\n(end of the agent's text)\\n\\n" + (ask.intro ?? "") + "\\n\\nOpen this link to answer (it works once): " + reply.CallbackUrl()
      }
    }
  }

  on reply(answer, comment) {
    ask.answer = answer
    ask.comment = comment
    default -> Answered
  }

  on reply.expired -> Expired
}

terminal state Answered
terminal state Expired
`;

/**
 * The built-ins: deployed name, file name for diagnostics, source, the alias of their one slot,
 * and (AskHuman) the string parameter whose allowed answers the page lists, from the run's data.
 */
export const BUILTINS = [
  { name: REQUEST_APPROVAL, file: "<builtin>/RequestApproval.flow", source: REQUEST_APPROVAL_SOURCE, alias: "answer", choices: null },
  { name: ASK_HUMAN, file: "<builtin>/AskHuman.flow", source: ASK_HUMAN_SOURCE, alias: "reply", choices: { event: "Reply", param: "answer", path: "ask.choices" } },
] as const;

type Builtin = (typeof BUILTINS)[number];

/** `a.b.c` as an expression (a name, then members), every node at `range`. */
function pathExpr(path: string, range: Range): Expr {
  const [head, ...rest] = path.split(".");
  let e: Expr = { kind: "name", name: head!, range };
  for (const name of rest) e = { kind: "member", object: e, property: { name, range }, range };
  return e;
}

/** A placeholder endpoint name of a built-in's source: `{a.b}` (no endpoint can be named so: ENDPOINT_NAME). */
const PLACEHOLDER = /^\{([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*)\}$/;
/** The range of the expressions completeBuiltin makes (they have no place in the source). */
const NOWHERE: Range = { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } };
/** How deep completeBuiltin walks (a compiled form nests a few dozen levels at most). */
const MAX_WALK_DEPTH = 256;

/**
 * What a built-in's compiled form gets that no `.flow` source can say (issue 33 items 2 and 3),
 * applied between compiling and storing it (deployBuiltins); returns a completed copy:
 * - `send message to "{ask.recipient}"`: the endpoint is the value of `ask.recipient` when the
 *   statement runs (ast.ts EndpointRef.expr), so one deployed version sends to the endpoint each
 *   run names;
 * - the `choices` parameter (AskHuman's `answer`) gets `page.choices` = the run's `ask.choices`
 *   (compiled.ts ParamPage): the responder page offers them as radio buttons.
 */
export function completeBuiltin(compiled: CompiledWorkflow, b: Pick<Builtin, "choices">): CompiledWorkflow {
  const wf = structuredClone(compiled);
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_WALK_DEPTH || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const e of v) walk(e, depth + 1);
      return;
    }
    const node = v as { kind?: unknown; endpoint?: EndpointRef };
    if ((node.kind === "sendMessage" || node.kind === "sendWebhook") && node.endpoint) {
      const m = PLACEHOLDER.exec(node.endpoint.name);
      if (m) node.endpoint.expr = pathExpr(m[1]!, node.endpoint.range);
    }
    for (const child of Object.values(v)) walk(child, depth + 1);
  };
  walk(wf.states, 0);
  if (b.choices) {
    const param = wf.events[b.choices.event]?.params.find((p) => p.name === b.choices!.param);
    if (!param) throw new Error(`built-in ${wf.name}: no parameter ${b.choices.event}.${b.choices.param}`);
    param.page = { ...param.page, choices: pathExpr(b.choices.path, NOWHERE) };
  }
  return wf;
}

/** What deploying the built-ins needs. */
export interface BuiltinDeployDeps {
  db: Db;
  /**
   * Lets a new version add to live runs the slots their state gained (deploy.ts `upgrade`).
   * `slotflow migrate` runs without it (it needs no secret): the built-ins' revisions add no slot
   * to a state, so their runs lose nothing.
   */
  upgrade?: UpgradeServices;
}

/** One built-in after deployBuiltinsWith: its current version, and whether this call made it. */
export interface BuiltinDeployed {
  name: string;
  version: number;
  created: boolean;
}

/**
 * Deploys the built-in workflows; returns each one's current version. A built-in whose current
 * version has the same source is skipped before anything is compiled (so a process that does not
 * deploy never loads the compiler, issue 22 item 3): a second start or `migrate` with the same
 * slotflow release creates no version. Throws what deploy throws (a refusal would be a bug in
 * this file; a version conflict names the problem).
 */
export async function deployBuiltinsWith(deps: BuiltinDeployDeps): Promise<BuiltinDeployed[]> {
  const out: BuiltinDeployed[] = [];
  for (const b of BUILTINS) {
    const sha = createHash("sha256").update(b.source).digest("hex");
    const wf = await deps.db.workflow.findUnique({ where: { name: b.name } });
    if (wf) {
      const current = await deps.db.workflowVersion.findUnique({ where: { workflowName_version: { workflowName: b.name, version: wf.currentVersion } } });
      if (current?.sourceSha256 === sha) {
        out.push({ name: b.name, version: wf.currentVersion, created: false });
        continue;
      }
    }
    const { deploy } = await import("../engine/versions/deploy.js");
    // compiled off this thread, as the web compiles a deploy: the compiler stays out of this process's heap
    const compile = async (source: string, file: string) => {
      const r = await compileOffThread(source, file);
      return { diagnostics: r.diagnostics, workflow: r.workflow && completeBuiltin(r.workflow, b) };
    };
    const r = await deploy(deps.db, b.source, b.file, { name: b.name, compile, ...(deps.upgrade ? { upgrade: deps.upgrade } : {}) });
    out.push({ name: r.name, version: r.version, created: r.created });
  }
  return out;
}

/**
 * Deploys the built-in workflows from a running process (serve, web, mcp): with the upgrade
 * services, announcing each new version to the other processes (runtime.ts announceDeploy).
 */
export async function deployBuiltins(rt: Pick<Runtime, "db" | "log" | "sealer" | "config" | "versions">): Promise<void> {
  const deployed = await deployBuiltinsWith({ db: rt.db, upgrade: { sealer: rt.sealer, baseUrl: rt.config.baseUrl, limits: rt.config.limits } });
  for (const d of deployed.filter((x) => x.created)) {
    await announceDeploy(rt, d.name);
    rt.log.info({ workflow: d.name, version: d.version }, "deployed built-in workflow");
  }
}
