/**
 * The slot-setting family (issue 39 item 3): where each setting of a `subscribe` or `call` is
 * read, checked, emitted and read again at run time — one row per `Setting["kind"]` (ast.ts), so a
 * new setting kind does not type-check until it has a row here. Unlike operators and built-ins
 * (operators.ts, builtins.ts), a setting's runtime reader needs the engine's slot records, so the
 * reader stays in the engine and this table names it; test/lang/slot-settings-table.test.ts
 * checks that every file named exists and holds the symbol named.
 *
 * Columns: `word` as written in source; `on` the members that take it (the checker refuses it on
 * the others, FLOW371); `check` the checker's place; `emit` the compiled form's key (compiled.ts
 * CompiledSlot, or CompiledCall for call settings); `reader` the engine module and function that
 * evaluates it at run time ("file.ts#symbol", paths from src/).
 */
import type { Setting } from "../ast.js";

/** One slot setting's homes. */
export interface SlotSettingRow {
  word: string;
  on: readonly ("subscribe" | "call")[];
  /** "file.ts#symbol" under src/lang/: where the checker types the setting. */
  check: string;
  /** The key of the compiled form that carries it. */
  emit: string;
  /** "file.ts#symbol" under src/: where the runtime evaluates or reads it. */
  reader: string;
}

const both = ["subscribe", "call"] as const;
const person = ["subscribe"] as const;
const call = ["call"] as const;

/** Every slot setting, by its kind in ast.ts `Setting`. Parsed in build.ts (SETTING_WORDS). */
export const SLOT_SETTINGS: Readonly<Record<Setting["kind"], SlotSettingRow>> = {
  candidates: { word: "Candidates", on: person, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.candidates", reader: "engine/lifecycles/slot.ts#setCandidates" },
  requires: { word: "Requires", on: person, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.requires, requiresWording(s)", reader: "engine/commands/requires.ts#requiresRefusal" },
  after: { word: "After", on: both, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.after", reader: "engine/lifecycles/slot.ts#openSatisfiedSlots" },
  deadline: { word: "Deadline", on: both, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.deadline", reader: "engine/lifecycles/slot.ts#openSlot" },
  title: { word: "Title", on: person, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.title, titles", reader: "engine/views/responder.ts#slotText" },
  intro: { word: "Intro", on: person, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.intro, intros", reader: "engine/views/responder.ts#slotText" },
  language: { word: "Language", on: both, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.language", reader: "engine/views/responder.ts#pageText" },
  quorum: { word: "Quorum", on: both, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.quorum", reader: "engine/lifecycles/slot.ts#quorumOf" },
  each: { word: "each", on: both, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.each", reader: "engine/lifecycles/slot.ts#runEachBlocks" },
  forwardable: { word: "Forwardable", on: person, check: "check-states.ts#checkSubscribe", emit: "CompiledSlot.forwardable", reader: "engine/commands/forward.ts#forward" },
  method: { word: "Method", on: call, check: "check-calls.ts#checkCallSetting", emit: "CompiledCall.callee.method", reader: "engine/lifecycles/call.ts#startCall" },
  path: { word: "Path", on: call, check: "check-calls.ts#checkCallSetting", emit: "CompiledCall.path", reader: "engine/lifecycles/call.ts#startCall" },
  input: { word: "Input", on: call, check: "check-calls.ts#checkCallSetting", emit: "CompiledCall.input", reader: "engine/lifecycles/call.ts#startCall" },
  timeout: { word: "Timeout", on: call, check: "check-calls.ts#checkCallSetting", emit: "CompiledCall.timeout", reader: "engine/lifecycles/call.ts#startCall" },
  timer: { word: "after/every", on: both, check: "check-states.ts#checkTimer", emit: "CompiledSlot.timers", reader: "engine/lifecycles/timer.ts#startSlotTimers" },
  attempts: { word: "Attempts", on: call, check: "check-calls.ts#checkCallSetting", emit: "CompiledCall.attempts", reader: "engine/lifecycles/call.ts#startCall" },
};
