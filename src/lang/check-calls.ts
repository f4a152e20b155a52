/**
 * The checks of calls and results (v0.5; docs/language.md "Calls", "Results"; issue 40 item 1):
 * which settings a `call` takes and their types, what `returns` names, and the `result { … }`
 * statement against the workflow's `returns` event.
 *
 * What compile time cannot check, and is left to run time (docs/language.md says so):
 * - `call http "name"`: that an endpoint of that name and kind `http` exists (endpoints are
 *   operators' configuration, named at run time; a missing one fails the call);
 * - `call task "type"`: that a worker serves the type;
 * - `call workflow Child`: that `Child` is deployed and that `Input` fits its parameters — the
 *   child lives in another file and is deployed on its own schedule, so its current version is
 *   only known when the call starts; an input that does not fit fails the call at once, as an
 *   invalid start would be refused. Compile time checks that `Child` is a name and that every
 *   `Input` value has a JSON form.
 */
import type { CallDecl, Expr, FieldInit, FlowFile, ResultStmt, Setting, Subscribe } from "./ast.js";
import { HTTP_METHODS } from "./ast.js";
import { Codes } from "./codes.js";
import type { ExprChecker, ExprEnv } from "./check-expr.js";
import type { EventInfo, Reporter, ReturnsInfo } from "./info.js";
import { nearNames } from "./near-names.js";
import { assignable, isValue, showType, type Ty } from "./types.js";

/** The settings of a person's slot that a call does not take (its slot is answered by its callee). */
const PERSON_ONLY = new Set<Setting["kind"]>(["candidates", "requires", "title", "intro", "forwardable"]);
/** The settings only a call takes. */
const CALL_ONLY = new Set<Setting["kind"]>(["method", "path", "input", "timeout", "attempts"]);

/**
 * Why `setting` does not belong to `member` (FLOW371), or null when it does: a person's setting
 * on a call, a call's setting on a subscribe, `Method`/`Path` off `call http`, `Timeout` on
 * `call workflow` (a child run's time limit is `Deadline`).
 */
export function callSettingProblem(member: Subscribe | CallDecl, setting: Setting, name: string): string | null {
  if (member.kind === "subscribe") {
    if (!CALL_ONLY.has(setting.kind)) return null;
    return `${name} is a setting of a call (call http/task/workflow … as x { ${name}… }); a subscribe is answered by a person and takes Candidates, Requires, After, Deadline, Title, Intro, Quorum, Forwardable and each`;
  }
  const alias = member.alias.name;
  if (PERSON_ONLY.has(setting.kind)) {
    return `${name} is a setting of a person's slot (subscribe): call '${alias}' is answered by its callee only; remove ${name}`;
  }
  const type = member.callee.type;
  if ((setting.kind === "method" || setting.kind === "path") && type !== "http") {
    return `${name} applies to 'call http' only; 'call ${type}' sends its Input ${type === "task" ? "to the task's workers" : "as the child run's input"}: remove ${name}`;
  }
  if (setting.kind === "timeout" && type === "workflow") {
    return `Timeout is per attempt of 'call http' or 'call task'; a child run waits as long as it needs: bound it with Deadline instead`;
  }
  return null;
}

/** The types of a call's own settings (`Method`, `Path`, `Input`, `Timeout`, `Attempts`). */
export function checkCallSetting(ctx: { report: Reporter; exprs: ExprChecker }, setting: Setting, env: ExprEnv): void {
  const report = ctx.report;
  switch (setting.kind) {
    case "method": {
      const word = setting.method.name;
      if ((HTTP_METHODS as readonly string[]).includes(word)) return;
      const upper = word.toUpperCase();
      const fix = (HTTP_METHODS as readonly string[]).includes(upper) ? `: write Method: ${upper}` : "";
      report.error(Codes.CallMethod, `unknown Method '${word}': it is one of ${HTTP_METHODS.join(", ")}${fix}`, setting.method.range);
      return;
    }
    case "path": {
      const t = ctx.exprs.check(setting.expr, env);
      if (t.kind !== "error" && !(t.kind === "string" && !t.optional)) {
        const fix = t.kind === "string" ? ` (it may be null: write (… ?? ""))` : "";
        report.error(Codes.CallSettingType, `Path must be a string (a path and query appended to the endpoint's URL), found ${showType(t)}${fix}`, setting.expr.range);
      }
      return;
    }
    case "timeout": {
      const t = ctx.exprs.check(setting.expr, env);
      if (t.kind !== "error" && !(t.kind === "duration" && !t.optional)) {
        report.error(Codes.CallSettingType, `Timeout must be a duration (per attempt, such as 10s), found ${showType(t)}`, setting.expr.range);
      } else if ((literalValue(setting.expr, "duration") ?? 1) <= 0) {
        report.error(Codes.CallSettingType, `Timeout must be longer than 0s`, setting.expr.range);
      }
      return;
    }
    case "attempts": {
      const t = ctx.exprs.check(setting.expr, env);
      if (t.kind !== "error" && !(t.kind === "int" && !t.optional)) {
        report.error(Codes.CallAttempts, `Attempts must be an int (attempts in all, at least 1), found ${showType(t)}`, setting.expr.range);
      } else if ((literalValue(setting.expr, "int") ?? 1) < 1) {
        report.error(Codes.CallAttempts, `Attempts counts attempts in all, so it is at least 1: write Attempts: 1 for no retry`, setting.expr.range);
      }
      return;
    }
    case "input":
      jsonFields(ctx, setting.fields, env, "Input");
      return;
    default:
      return;
  }
}

/** The value of `e` when it is a valid literal of `type`, else null. */
function literalValue(e: Expr, type: "int" | "duration"): number | null {
  if (e.kind !== "literal" || e.type !== type || ("invalid" in e && e.invalid)) return null;
  return e.value as number;
}

/**
 * The fields of `Input { … }` and `result { … }`: each name once (FLOW100), each value typed.
 * Every value a handler can name has a JSON form (a slot alias is not a value, FLOW314; a matcher
 * only stands in Candidates, FLOW305; a principal only in Authorize). Returns each field's type.
 */
function jsonFields(ctx: { report: Reporter; exprs: ExprChecker }, fields: FieldInit[], env: ExprEnv, what: string): Map<string, Ty> {
  const seen = new Map<string, Ty>();
  for (const f of fields) {
    const t = ctx.exprs.check(f.value, env);
    if (seen.has(f.name.name)) {
      ctx.report.error(Codes.DuplicateName, `duplicate field '${f.name.name}' in ${what}`, f.name.range);
      continue;
    }
    seen.set(f.name.name, t);
  }
  return seen;
}

/** `returns E` of a call (FLOW378 when E names no event of this workflow). */
export function checkReturnsOfCall(report: Reporter, call: CallDecl, events: Map<string, EventInfo>): void {
  if (call.returns === null || events.has(call.returns.name)) return;
  report.error(Codes.UnknownReturns, unknownReturns(call.returns.name, events, "a call's answer"), call.returns.range);
}

function unknownReturns(name: string, events: Map<string, EventInfo>, what: string): string {
  const [near] = nearNames(name, [...events.keys()]);
  const hint = near ? `: did you mean '${near}'?` : events.size === 0 ? ": declare it, such as event Done(ok: bool)" : "";
  return `'returns ${name}' names no event of this workflow; ${what} is read as an event's parameters${hint}`;
}

/**
 * The workflow's `returns E` (v0.5 Results): E must be an event of this workflow (FLOW378); a
 * parameter named `state` is filled with the terminal state's name, so it must be `string` or
 * `string?` (FLOW381). Null when the workflow declares no result.
 */
export function checkWorkflowReturns(report: Reporter, file: FlowFile, events: Map<string, EventInfo>): ReturnsInfo | null {
  if (!file.returns) return null;
  const event = events.get(file.returns.name) ?? null;
  if (event === null) {
    report.error(Codes.UnknownReturns, unknownReturns(file.returns.name, events, "the run's result"), file.returns.range);
    return { name: file.returns, event: null };
  }
  const state = event.params.find((p) => p.name === "state");
  if (state && state.type.kind !== "string" && state.type.kind !== "error") {
    report.error(
      Codes.ResultFields,
      `the result's 'state' is the name of the terminal state the run finished in, a string; ${event.name}'s 'state' is ${showType(state.type)}`,
      state.range,
    );
  }
  return { name: file.returns, event };
}

/**
 * `result { … }` (v0.5 Results): FLOW380 without `returns`; each field a parameter of the
 * returns event (FLOW381), of its type (FLOW200); every parameter that is not optional given,
 * except `state` (filled with the terminal state's name, never set by `result`).
 */
export function checkResult(ctx: { report: Reporter; exprs: ExprChecker }, s: ResultStmt, env: ExprEnv, returns: ReturnsInfo | null): void {
  const report = ctx.report;
  const types = jsonFields(ctx, s.fields, env, "result");
  if (returns === null) {
    report.error(
      Codes.ResultWithoutReturns,
      "result { … } sets the run's result, which the workflow must declare: write 'returns E' after its parameters (workflow W(…) returns E), E an event whose parameters are the result's fields",
      { start: s.range.start, end: { ...s.range.start, column: s.range.start.column + 6, offset: s.range.start.offset + 6 } },
    );
    return;
  }
  const event = returns.event;
  if (event === null) return;
  for (const f of s.fields) {
    const name = f.name.name;
    if (name === "state") {
      report.error(Codes.ResultFields, `'state' is filled with the name of the terminal state the run finishes in: result { … } does not set it`, f.name.range);
      continue;
    }
    const param = event.params.find((p) => p.name === name);
    if (param === undefined) {
      const [near] = nearNames(name, event.params.map((p) => p.name).filter((n) => n !== "state"));
      report.error(
        Codes.ResultFields,
        `${event.name} has no parameter '${name}'${near ? `: did you mean '${near}'?` : ""} (the result's fields are ${event.name}'s parameters)`,
        f.name.range,
      );
      continue;
    }
    const t = types.get(name);
    if (t !== undefined && isValue(t) && !assignable(t, param.type)) {
      report.error(Codes.TypeMismatch, `'${name}' of ${event.name} is ${showType(param.type)}, found ${showType(t)}`, f.value.range);
    } else if (t !== undefined && t.kind === "null" && !assignable(t, param.type)) {
      report.error(Codes.TypeMismatch, `'${name}' of ${event.name} is ${showType(param.type)}, found null`, f.value.range);
    }
  }
  const given = new Set(s.fields.map((f) => f.name.name));
  const missing = event.params.filter((p) => p.name !== "state" && !given.has(p.name) && isValue(p.type) && !p.type.optional).map((p) => p.name);
  if (missing.length > 0) {
    report.error(
      Codes.ResultFields,
      `result needs every parameter of ${event.name} that is not optional; missing: ${missing.join(", ")}`,
      { start: s.range.start, end: { ...s.range.start, column: s.range.start.column + 6, offset: s.range.start.offset + 6 } },
    );
  }
}
