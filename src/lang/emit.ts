/**
 * Builds the compiled form (compiled.ts) of a checked file. Called only when the checker found no
 * error, so every name resolves and every type is known.
 *
 * The name-keyed records (`entities`, `events`, `states`, `on`, `expired`, `fields`) are objects
 * without a prototype: look names up with `Object.hasOwn` (after a JSON round trip they are plain
 * objects again, and names such as `constructor` are valid identifiers).
 */
import type { Arm, CallDecl, Expr, FlowFile, Handler, LangVariant, Setting, StateDecl, Timer } from "./ast.js";
import { canonicalTag } from "./check-languages.js";
import type { CheckedModel } from "./checker.js";
import {
  COMPILED_FORMAT, type CompiledEntity, type CompiledEvent, type CompiledOnEvent, type CompiledParam,
  type CompiledCall, type CompiledSlot, type CompiledState, type CompiledTimer, type CompiledWorkflow,
} from "./compiled.js";
import type { ParamInfo } from "./info.js";
import { toTypeSpec } from "./types.js";

function record<T>(entries: Iterable<[string, T]>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  for (const [k, v] of entries) out[k] = v;
  return out;
}

function params(list: ParamInfo[]): CompiledParam[] {
  return list.map((p) => ({ name: p.name, type: toTypeSpec(p.type), ...(p.page ? { page: p.page } : {}), ...(p.rules ? { rules: p.rules } : {}) }));
}

/** The compiled form of `file`, which `check` accepted without errors. */
export function emit(file: FlowFile, model: CheckedModel, source = ""): CompiledWorkflow {
  const entities = record<CompiledEntity>(
    [...model.entities.values()].map((e) => [
      e.name,
      {
        name: e.name,
        fields: record(
          [...e.fields.values()].map((f) => [f.name, { type: toTypeSpec(f.type), maxLength: f.maxLength, minLength: f.minLength }]),
        ),
      },
    ]),
  );
  const events = record<CompiledEvent>(
    file.events.map((e) => [
      e.name.name,
      { name: e.name.name, params: params(model.events.get(e.name.name)!.params), authorize: e.authorize },
    ]),
  );
  return {
    format: COMPILED_FORMAT,
    name: file.name.name,
    params: params(model.params),
    entities,
    events,
    initialState: model.initialState!,
    states: record(file.states.map((s) => [s.name.name, state(s, model, source)])),
    maps: model.maps.map(({ decl, fromParams }) => ({
      from: decl.from.name,
      fromParams: params(fromParams),
      to: decl.to.name,
      args: decl.args.map((a) => ({ name: a.name.name, value: a.value })),
    })),
    // v0.5 (issue 38 M2): a slot without Candidates is answered only through its link.
    withoutCandidates: "link-only",
    ...(file.returns ? { returns: file.returns.name } : {}),
  };
}

/** The callee and settings of a `call` (v0.5; compiled.ts CompiledCall). */
function callOf(m: CallDecl): CompiledCall {
  const c = m.callee;
  const method = setting(m.settings, "method")?.method.name as Extract<CompiledCall["callee"], { type: "http" }>["method"] | undefined;
  const callee: CompiledCall["callee"] =
    c.type === "http" ? { type: "http", endpoint: c.endpoint, method: method ?? "POST" }
    : c.type === "task" ? { type: "task", task: c.task }
    : { type: "workflow", workflow: c.workflow.name };
  return {
    callee,
    path: setting(m.settings, "path")?.expr ?? null,
    input: (setting(m.settings, "input")?.fields ?? []).map((f) => ({ name: f.name.name, value: f.value })),
    timeout: setting(m.settings, "timeout")?.expr ?? null,
    attempts: setting(m.settings, "attempts")?.expr ?? null,
  };
}

function setting<K extends Setting["kind"]>(settings: Setting[], kind: K): Extract<Setting, { kind: K }> | null {
  return (settings.find((s) => s.kind === kind) as Extract<Setting, { kind: K }> | undefined) ?? null;
}

/** `Title` / `Intro` as optional keys, present only when given (compiled.ts). */
/** `Requires: … else wording` — the key only when given, so older compiled forms stay equal (issue 30 item 8). */
function requiresWording(settings: Setting[]): Pick<CompiledSlot, "requiresWording"> {
  const wording = setting(settings, "requires")?.wording;
  return wording ? { requiresWording: wording } : {};
}

/** `Forwardable: expr` (v0.4) — the key only when given, so older compiled forms stay equal. */
function forwardable(settings: Setting[]): Pick<CompiledSlot, "forwardable"> {
  const expr = setting(settings, "forwardable")?.expr;
  return expr ? { forwardable: expr } : {};
}

function pageText(settings: Setting[]): Pick<CompiledSlot, "title" | "intro" | "titles" | "intros" | "requiresWordings" | "language"> {
  const title = setting(settings, "title")?.expr;
  const intro = setting(settings, "intro")?.expr;
  const language = setting(settings, "language")?.expr;
  // v0.5 (issue 42): language variants by canonical BCP 47 tag; keys absent without variants
  const byTag = (variants: LangVariant[] | undefined): Record<string, Expr> | null => {
    if (!variants?.length) return null;
    const out: Record<string, Expr> = {};
    for (const v of variants) out[canonicalTag(v.tag) ?? v.tag] = v.expr;
    return out;
  };
  const titles = byTag(setting(settings, "title")?.variants);
  const intros = byTag(setting(settings, "intro")?.variants);
  const requiresWordings = byTag(setting(settings, "requires")?.variants);
  return {
    ...(title ? { title } : {}),
    ...(intro ? { intro } : {}),
    ...(titles ? { titles } : {}),
    ...(intros ? { intros } : {}),
    ...(requiresWordings ? { requiresWordings } : {}),
    ...(language ? { language } : {}),
  };
}

/** `Quorum` / `each` (v0.4 Many responders) as optional keys, present only when given. */
function manyResponders(settings: Setting[]): Pick<CompiledSlot, "quorum" | "each"> {
  const quorum = setting(settings, "quorum")?.expr;
  const each = setting(settings, "each")?.body;
  return { ...(quorum ? { quorum } : {}), ...(each ? { each } : {}) };
}

/** One compiled timer (a state's, or a slot's: issue 43 item 3); `schedule` is its header as written. */
function compiledTimer(m: Timer, index: number, source: string): CompiledTimer {
  const header = source.slice(m.range.start.offset, m.handler.range.start.offset).trim().replace(/\s+/g, " ");
  return { index, every: m.mode === "every", duration: m.duration, first: m.first, schedule: header || m.mode, handler: m.handler };
}

/** The timers on a slot (issue 43 item 3) as an optional key, present only when it has some. */
function slotTimers(settings: Setting[], source: string): Pick<CompiledSlot, "timers"> {
  const timers = settings.filter((s): s is Timer => s.kind === "timer").map((t, i) => compiledTimer(t, i, source));
  return timers.length > 0 ? { timers } : {};
}

function state(s: StateDecl, model: CheckedModel, source: string): CompiledState {
  const slots: CompiledSlot[] = [];
  const enter: CompiledState["enter"] = [];
  let enterArms: Arm[] | null = null;
  const timers: CompiledTimer[] = [];
  const on: [string, CompiledOnEvent][] = [];
  const expired: [string, Handler][] = [];
  const failed: [string, Handler][] = [];
  const milestones: CompiledState["milestones"] = [];
  for (const m of s.members) {
    switch (m.kind) {
      case "subscribe":
        slots.push({
          alias: m.alias.name,
          event: m.event.name,
          params: m.params.map((p) => p.name),
          forEach: m.forEach
            ? {
                variable: m.forEach.variable.name,
                iterable: m.forEach.iterable,
                elementType: toTypeSpec(model.states.get(s.name.name)!.slots.get(m.alias.name)!.elementType),
              }
            : null,
          candidates: setting(m.settings, "candidates")?.matchers ?? null,
          requires: setting(m.settings, "requires")?.expr ?? null,
          ...requiresWording(m.settings),
          after: setting(m.settings, "after")?.aliases.map((a) => a.name) ?? [],
          deadline: setting(m.settings, "deadline")?.expr ?? null,
          ...pageText(m.settings),
          ...manyResponders(m.settings),
          ...slotTimers(m.settings, source),
          ...forwardable(m.settings),
        });
        break;
      case "call": {
        const slot = model.states.get(s.name.name)!.slots.get(m.alias.name)!;
        slots.push({
          alias: m.alias.name,
          event: m.returns?.name ?? "",
          params: slot.event?.params.map((p) => p.name) ?? [],
          kind: "call",
          call: callOf(m),
          forEach: m.forEach
            ? { variable: m.forEach.variable.name, iterable: m.forEach.iterable, elementType: toTypeSpec(slot.elementType) }
            : null,
          candidates: null,
          requires: null,
          after: setting(m.settings, "after")?.aliases.map((a) => a.name) ?? [],
          deadline: setting(m.settings, "deadline")?.expr ?? null,
          ...manyResponders(m.settings),
          ...slotTimers(m.settings, source),
        });
        break;
      }
      case "onFailed":
        failed.push([m.alias.name, m.handler]);
        break;
      case "enter":
        enter.push(m.body);
        if (m.arms.length > 0) enterArms = m.arms;
        break;
      case "timer":
        timers.push(compiledTimer(m, timers.length, source));
        break;
      case "on":
        on.push([m.alias.name, { alias: m.alias.name, params: m.params.map((p) => p.name), handler: m.handler }]);
        break;
      case "onExpired":
        expired.push([m.alias.name, m.handler]);
        break;
      case "milestone":
        milestones.push({ name: m.name.name, condition: m.condition, body: m.body });
        break;
    }
  }
  return {
    name: s.name.name,
    initial: s.modifier === "initial",
    terminal: s.modifier === "terminal",
    slots,
    enter,
    ...(enterArms ? { enterArms } : {}),
    ...(timers.length > 0 ? { timers } : {}),
    on: record(on),
    expired: record(expired),
    ...(failed.length > 0 ? { failed: record(failed) } : {}),
    milestones,
  };
}
