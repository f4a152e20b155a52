/**
 * The answer controls of a `send message … { answer: alias }` (v0.4 "Answers inside Slack"),
 * decided from the slot's event signature when the step queues the message. A fact the engine
 * hands to a channel (issue 39 item 2): it says *what* may be answered, never how a channel shows
 * it — the Slack channel (src/channels/slack/blocks.ts) turns it into buttons or a modal.
 *
 * - one `bool` parameter and otherwise only nullable ones → two buttons; the nullable ones are sent
 *   as `null`. Labels: the bool parameter's `@label`; a label "Yes / No" (split on ` / `) names
 *   both buttons, a single label names the `true` button and the other says "Reject"; no label:
 *   Approve / Reject;
 * - any other event (none bool, several, or required non-bool ones) → one button that opens a
 *   modal with one input per parameter: `string` and `duration` a text input (multi-line with
 *   `@multiline`), `int` / `decimal` a number input, `datetime` a date picker (the day at 00:00 UTC), `date` a date picker (v0.5),
 *   `bool` a checkbox, anything else (lists) a text input read as JSON.
 *
 * Pure: no I/O. `AnswerSpec` is stored inside the delivery's sealed payload. (Moved from
 * src/slack/controls.ts, issue 39 item 2: the engine imports no channel.)
 */
import type { CompiledParam, ParamRules, TypeSpec } from "../../lang/compiled.js";

export type ModalInput = "text" | "number" | "date" | "checkbox" | "json";

export interface ModalParam {
  name: string;
  type: TypeSpec;
  input: ModalInput;
  label: string;
  help: string | null;
  multiline: boolean;
  /** The parameter's constraints (v0.5), checked on submission like every door's (body.ts); absent when none. */
  rules?: ParamRules;
}

export type AnswerControls =
  | { kind: "buttons"; param: string; nulls: string[]; yes: string; no: string }
  | { kind: "modal"; event: string; params: ModalParam[] };

/** What a message answering a slot carries, decided at queue time. `ref` is the opaque reference its controls carry. */
export interface AnswerSpec {
  ref: string;
  slotId: string;
  alias: string;
  element: number | null;
  controls: AnswerControls;
}

const DEFAULT_YES = "Approve";
const DEFAULT_NO = "Reject";

function inputOf(t: TypeSpec): ModalInput {
  switch (t.kind) {
    case "string":
    case "duration":
      return "text";
    case "int":
    case "decimal":
      return "number";
    case "datetime":
    case "date":
      return "date";
    case "bool":
      return "checkbox";
    default:
      return "json";
  }
}

/** The controls for an event named `event` with parameters `params` (see the module header). */
export function controlsFor(event: string, params: readonly CompiledParam[]): AnswerControls {
  const bools = params.filter((p) => p.type.kind === "bool" && !p.type.optional);
  const others = params.filter((p) => !bools.includes(p));
  if (bools.length === 1 && others.every((p) => p.type.optional)) {
    const label = bools[0].page?.label?.trim();
    const [yes, no] = label ? (label.includes(" / ") ? label.split(" / ", 2).map((s) => s.trim()) : [label, DEFAULT_NO]) : [DEFAULT_YES, DEFAULT_NO];
    return { kind: "buttons", param: bools[0].name, nulls: others.map((p) => p.name), yes: yes || DEFAULT_YES, no: no || DEFAULT_NO };
  }
  return {
    kind: "modal",
    event,
    params: params.map((p) => ({
      name: p.name,
      type: p.type,
      input: inputOf(p.type),
      label: p.page?.label ?? p.name,
      help: p.page?.help ?? null,
      multiline: p.page?.multiline === true,
      ...(p.rules ? { rules: p.rules } : {}),
    })),
  };
}
