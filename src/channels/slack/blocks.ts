/**
 * Block Kit for answers inside Slack (v0.4 "Answers inside Slack"): the question with its
 * controls, the modal, the message that replaces the question once the slot closed, and the
 * reading of a modal's submission. Pure: no I/O.
 *
 * Slack's limits (Block Kit reference) kept here, checked by test/slack/blocks.test.ts: at most 50
 * blocks in a message and 100 in a modal; a section's text ≤ 3000 characters; a button's text ≤ 75
 * and its value ≤ 2000; an input's label ≤ 2000 and hint ≤ 2000; a modal's title ≤ 24, its submit and
 * close ≤ 24, its private_metadata ≤ 3000; action_id and block_id ≤ 255 and unique where Slack asks.
 * Run data is escaped for mrkdwn (`slackEscape`: `&`, `<`, `>`), so it cannot form a link or a mention.
 */
import type { ActionsBlock, Block, Button, ContextBlock, InputBlock, KnownBlock, ModalView, PlainTextElement, SectionBlock } from "@slack/web-api";
import { checkBody } from "../../engine/values/body.js";
import { slackEscape } from "./wire.js";
import type { AnswerControls, ModalParam } from "../../engine/values/answer-controls.js";

export const LIMITS = { messageBlocks: 50, modalBlocks: 100, sectionText: 3000, buttonText: 75, buttonValue: 2000, inputLabel: 2000, hint: 2000, modalTitle: 24, metadata: 3000, id: 255 } as const;

/** action_id of the buttons; callback_id of the modal. */
export const ACTION = { yes: "slotflow_yes", no: "slotflow_no", open: "slotflow_open" } as const;
export const MODAL_CALLBACK = "slotflow_answer";
/** action_id of every input in the modal (block ids tell the inputs apart). */
const INPUT_ACTION = "v";

const plain = (text: string, max: number): PlainTextElement => ({ type: "plain_text", text: clip(text, max) || " ", emoji: false });
const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
const section = (mrkdwn: string): SectionBlock => ({ type: "section", text: { type: "mrkdwn", text: clip(mrkdwn, LIMITS.sectionText) } });

/** The question as posted (`chat.postMessage`): its text and the answer controls carrying `ref`. */
export function questionMessage(question: string, ref: string, controls: AnswerControls): { text: string; blocks: KnownBlock[] } {
  const buttons: Button[] =
    controls.kind === "buttons"
      ? [
          { type: "button", action_id: ACTION.yes, text: plain(controls.yes, LIMITS.buttonText), value: ref, style: "primary" },
          { type: "button", action_id: ACTION.no, text: plain(controls.no, LIMITS.buttonText), value: ref, style: "danger" },
        ]
      : [{ type: "button", action_id: ACTION.open, text: plain("Answer…", LIMITS.buttonText), value: ref, style: "primary" }];
  const actions: ActionsBlock = { type: "actions", block_id: "slotflow_answer", elements: buttons };
  return { text: clip(slackEscape(question), LIMITS.sectionText), blocks: [section(slackEscape(question)), actions] };
}

/** The message that replaces the question once its slot closed: the question and one line saying how, no controls. */
export function closedMessage(question: string, line: string): { text: string; blocks: KnownBlock[] } {
  const context: ContextBlock = { type: "context", elements: [{ type: "mrkdwn", text: clip(line, LIMITS.sectionText) }] };
  return { text: clip(`${slackEscape(question)} — ${line}`, LIMITS.sectionText), blocks: [section(slackEscape(question)), context] };
}

/** `<!date^…>`: the reader's local time, with `at` as the fallback text. */
export function slackDate(at: Date): string {
  const fallback = `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `<!date^${Math.floor(at.getTime() / 1000)}^{date_short_pretty} at {time}|${fallback}>`;
}

/** The closed slot as the replacement message says it. `answeredBy` is the slot's (`slots.answered_by`). */
export interface ClosedSlot {
  status: string;
  closedAt: Date;
  args: Record<string, unknown> | null;
  answeredBy: { via: string; id?: string; email?: string | null } | null;
}

/** "Approved by @name at …" and its siblings (see docs/slack.md "What the message says afterwards"). */
export function outcomeLine(controls: AnswerControls, slot: ClosedSlot): string {
  const when = slackDate(slot.closedAt);
  if (slot.status === "expired") return `Expired at ${when}, unanswered.`;
  if (slot.status !== "completed") return `No longer asked (closed at ${when}).`;
  const by = whoAnswered(slot.answeredBy);
  if (controls.kind === "buttons" && slot.args && typeof slot.args[controls.param] === "boolean") {
    const yes = slot.args[controls.param] === true;
    const label = yes ? controls.yes : controls.no;
    const verb = label === "Approve" ? "Approved" : label === "Reject" ? "Rejected" : `“${slackEscape(label)}”`;
    return `${verb} by ${by} at ${when}`;
  }
  return `Answered by ${by} at ${when}`;
}

function whoAnswered(a: ClosedSlot["answeredBy"]): string {
  if (a?.via === "slack" && a.id) {
    const user = a.id.split(":")[2];
    if (user && /^[A-Z0-9]+$/.test(user)) return `<@${user}>`;
  }
  if (a?.via === "principal") return slackEscape(a.email ?? a.id ?? "a signed-in person");
  if (a?.via === "link") return "the holder of its link";
  return "someone";
}

/** The modal opened by the "Answer…" button (`views.open`): the question and one input per parameter. */
export function answerModal(question: string, ref: string, controls: Extract<AnswerControls, { kind: "modal" }>): ModalView {
  const inputs: InputBlock[] = controls.params.slice(0, LIMITS.modalBlocks - 1).map((p, i) => ({
    type: "input",
    block_id: `p${i}`,
    optional: p.type.optional || p.input === "checkbox",
    label: plain(p.label, LIMITS.inputLabel),
    ...(p.help ? { hint: plain(p.help, LIMITS.hint) } : {}),
    element: inputElement(p),
  }));
  const blocks: (KnownBlock | Block)[] = [section(slackEscape(question)), ...inputs];
  return {
    type: "modal",
    callback_id: MODAL_CALLBACK,
    private_metadata: ref,
    title: plain("Answer", LIMITS.modalTitle),
    submit: plain("Submit", LIMITS.modalTitle),
    close: plain("Cancel", LIMITS.modalTitle),
    blocks,
  };
}

function inputElement(p: ModalParam): InputBlock["element"] {
  switch (p.input) {
    case "number":
      return { type: "number_input", action_id: INPUT_ACTION, is_decimal_allowed: p.type.kind === "decimal" };
    case "date":
      return { type: "datepicker", action_id: INPUT_ACTION };
    case "checkbox":
      return { type: "checkboxes", action_id: INPUT_ACTION, options: [{ text: plain(p.label, LIMITS.buttonText), value: "true" }] };
    default:
      return { type: "plain_text_input", action_id: INPUT_ACTION, multiline: p.multiline || p.input === "json" };
  }
}

/** One input's state as `view_submission` sends it (`view.state.values[block][action]`). */
interface InputState {
  value?: string | null;
  selected_date?: string | null;
  selected_options?: { value: string }[];
}

/**
 * A modal's submission as the event's arguments, validated like the responder page (the event's
 * parameter rules, `checkBody`): the arguments, or the errors by block id for Slack's
 * `response_action: "errors"`. Empty optional inputs are `null`; an unchecked box is `false` (`null`
 * for a `bool?`); a datetime is that day at 00:00 UTC, a `date` the day; a list input is read as JSON.
 * Constraints (v0.5) are checked here by the same `checkBody` as every other door; each broken
 * rule is the error of its input ("Annual revenue must be at least 0").
 */
export function readSubmission(
  controls: Extract<AnswerControls, { kind: "modal" }>,
  values: Record<string, Record<string, InputState>> | undefined,
  params: Parameters<typeof checkBody>[1],
): { ok: true; args: Record<string, unknown> } | { ok: false; errors: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  controls.params.forEach((p, i) => {
    const st = values?.[`p${i}`]?.[INPUT_ACTION] ?? {};
    const empty = p.type.optional ? null : undefined;
    switch (p.input) {
      case "checkbox":
        args[p.name] = (st.selected_options ?? []).some((o) => o.value === "true") ? true : p.type.optional ? null : false;
        return;
      case "date":
        args[p.name] = st.selected_date ? (p.type.kind === "date" ? st.selected_date : `${st.selected_date}T00:00:00Z`) : empty;
        return;
      case "number": {
        const raw = st.value?.trim();
        args[p.name] = raw ? (Number.isFinite(Number(raw)) ? Number(raw) : raw) : empty;
        return;
      }
      case "json": {
        const raw = st.value?.trim();
        if (!raw) args[p.name] = empty;
        else {
          try {
            args[p.name] = JSON.parse(raw) as unknown;
          } catch {
            errors[`p${i}`] = "Write a JSON value here, such as [\"a\", \"b\"].";
          }
        }
        return;
      }
      default:
        args[p.name] = st.value ?? (p.type.optional ? null : "");
    }
  });
  for (const [k, v] of Object.entries(args)) if (v === undefined) delete args[k];
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const checked = checkBody(args, params);
  if (checked.ok) return { ok: true, args };
  for (const pr of checked.problems) {
    const root = pr.name.split(/[.[]/)[0];
    const i = controls.params.findIndex((p) => p.name === root);
    const block = `p${i < 0 ? 0 : i}`;
    errors[block] ??= clip(`${controls.params[i]?.label ?? root} ${pr.problem}`, 2000);
  }
  if (Object.keys(errors).length === 0) errors.p0 = clip(checked.detail, 2000);
  return { ok: false, errors };
}
