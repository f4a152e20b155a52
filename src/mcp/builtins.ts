/**
 * The built-in workflows `slotflow.RequestApproval` and `slotflow.AskHuman` (issue 33 item 2): an
 * agent asks a person through the MCP tools request_approval and ask_human (tools.ts), which start
 * runs of these like any start (web/admin.ts startWorkflowRun). Each has one slot whose link is
 * minted in its state's `enter` and mailed to `recipient`; the person answers on the responder
 * page (or POSTs JSON to the link); the answer is kept on the run's tracked row `ask`, so it is
 * read back from PostgreSQL (tools.ts answerOf) by whichever process asks, after any restart.
 *
 * Names: a source declares an identifier (no dot); these are deployed under `slotflow.` + their
 * source name (deploy.ts `name`), a prefix no user source can take. They are deployed by every
 * start of a process serving HTTP (`slotflow serve`, `slotflow web`; cli/server.ts) and by
 * `slotflow mcp` (stdio.ts) — not by a worker or sweeper alone, which keep no compiler (issue 22
 * item 3) — versioned like any workflow: a changed source here becomes the next version.
 *
 * Choices (ask_human): the language has no enum type, so an answer is a string and the slot's
 * `Requires` admits only one of `choices` when there are any (the page lists them in its intro);
 * its refusal says so in the author's wording (`Requires … else`).
 */
import { createHash } from "node:crypto";
import { compileOffThread } from "../lang/compile-async.js";
import { announceDeploy, type Runtime } from "../runtime.js";

/** The prefix reserved for built-in workflows. */
export const BUILTIN_PREFIX = "slotflow.";
export const REQUEST_APPROVAL = "slotflow.RequestApproval";
export const ASK_HUMAN = "slotflow.AskHuman";

/** The source of slotflow.RequestApproval. */
export const REQUEST_APPROVAL_SOURCE = `// slotflow.RequestApproval — built in (docs/agents.md): an agent asks a person to approve something.
// The MCP tool request_approval starts it; the person answers through the link mailed to them.
workflow RequestApproval(ask: Approval)

entity Approval {
  recipient: string @minLength(3) @maxLength(320)
  title: string @minLength(1) @maxLength(200)
  details: string? @maxLength(4000)
  answerBy: datetime
  approved: bool?
  comment: string? @maxLength(4000)
}

event Answer(
  approved: bool @label("Do you approve?"),
  comment: string? @label("Comment") @help("Optional: a note for the agent that asked.") @multiline,
)

initial state Waiting {
  subscribe Answer(approved, comment) as answer {
    Deadline: ask.answerBy
    Title: ask.title
    Intro: ask.details
  }

  enter {
    send email to ask.recipient {
      subject: "Approval requested: " + ask.title
      body: "An agent asks for your approval: " + ask.title + "\\n\\n" + (ask.details ?? "") + "\\n\\nOpen this link to answer (it works once): " + answer.CallbackUrl()
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
// The MCP tool ask_human starts it; the person answers through the link mailed to them. With
// choices, the answer must be one of them (the page lists them; the answer is typed).
workflow AskHuman(ask: Question)

entity Question {
  recipient: string @minLength(3) @maxLength(320)
  question: string @minLength(1) @maxLength(4000)
  choices: list<string>
  intro: string? @maxLength(8000)
  answerBy: datetime
  answer: string?
  comment: string? @maxLength(4000)
}

event Reply(
  answer: string @label("Your answer") @multiline,
  comment: string? @label("Comment") @help("Optional: a note for the agent that asked.") @multiline,
)

initial state Waiting {
  subscribe Reply(answer, comment) as reply {
    Deadline: ask.answerBy
    Requires: len(ask.choices) == 0 || contains(ask.choices, answer) else "Answer with one of the choices listed above."
    Title: ask.question
    Intro: ask.intro
  }

  enter {
    send email to ask.recipient {
      subject: "A question for you: " + ask.question
      body: ask.question + "\\n\\n" + (ask.intro ?? "") + "\\n\\nOpen this link to answer (it works once): " + reply.CallbackUrl()
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

/** The built-ins: deployed name, file name for diagnostics, source, and the alias of their one slot. */
export const BUILTINS = [
  { name: REQUEST_APPROVAL, file: "<builtin>/RequestApproval.flow", source: REQUEST_APPROVAL_SOURCE, alias: "answer" },
  { name: ASK_HUMAN, file: "<builtin>/AskHuman.flow", source: ASK_HUMAN_SOURCE, alias: "reply" },
] as const;

/**
 * Deploys the built-in workflows. A built-in whose current version has the same source is skipped
 * before anything is compiled (so a process that does not deploy never loads the compiler, issue
 * 22 item 3). Throws what deploy throws (a refusal would be a bug in this file; a version conflict
 * names the problem).
 */
export async function deployBuiltins(rt: Pick<Runtime, "db" | "log" | "sealer" | "config" | "versions">): Promise<void> {
  for (const b of BUILTINS) {
    const sha = createHash("sha256").update(b.source).digest("hex");
    const wf = await rt.db.workflow.findUnique({ where: { name: b.name } });
    if (wf) {
      const current = await rt.db.workflowVersion.findUnique({ where: { workflowName_version: { workflowName: b.name, version: wf.currentVersion } } });
      if (current?.sourceSha256 === sha) continue;
    }
    const { deploy } = await import("../engine/versions/deploy.js");
    // compiled off this thread, as the web compiles a deploy: the compiler stays out of this process's heap
    const r = await deploy(rt.db, b.source, b.file, { name: b.name, compile: compileOffThread, upgrade: { sealer: rt.sealer, baseUrl: rt.config.baseUrl, limits: rt.config.limits } });
    await announceDeploy(rt, r.name);
    if (r.created) rt.log.info({ workflow: r.name, version: r.version }, "deployed built-in workflow");
  }
}
