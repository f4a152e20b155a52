/**
 * Statements of handler bodies (docs/language.md, "Statements"): `let`, assignment, `send email`,
 * `drop slot`, `if`, and calls whose value is discarded.
 */
import type { AssignStmt, Expr, Ident, Range, SendMessageStmt, SendWebhookStmt, Statement } from "./ast.js";
import { Codes } from "./codes.js";
import type { CheckContext, ExprChecker, ExprEnv } from "./check-expr.js";
import type { StateInfo } from "./info.js";
import { bindingWord, type Binding, type Scope } from "./scope.js";
import { assignable, isExactly, isOptional, showType, T } from "./types.js";
import { assignedIn, nonNullWhen, nullFix, withNonNull } from "./narrowing.js";
import { checkResult } from "./check-calls.js";

/** A handler body's environment: the expression scope plus the state whose slots it sees. */
export interface StmtEnv extends ExprEnv {
  state: StateInfo | null;
}

export class StatementChecker {
  constructor(
    private readonly ctx: CheckContext,
    private readonly exprs: ExprChecker,
  ) {}

  /** Checks `stmts` in a new block scope (their `let`s end with the block). */
  block(stmts: Statement[], env: StmtEnv): void {
    this.statements(stmts, { ...env, scope: env.scope.child() });
  }

  /** Checks `stmts` in `env.scope` itself, declaring their `let`s there. */
  statements(stmts: Statement[], env: StmtEnv): void {
    for (const s of stmts) this.statement(s, env);
  }

  /** Reports FLOW202 unless `e` is a non-optional bool. `what` names the construct. */
  condition(e: Expr, env: ExprEnv, what: string): void {
    const t = this.exprs.check(e, env);
    if (t.kind === "error" || isExactly(t, "bool")) return;
    const hint = t.kind === "bool" ? " (it may be null: write (… ?? false))" : "";
    this.ctx.report.error(Codes.ConditionNotBool, `${what} must be a bool, found ${showType(t)}${hint}`, e.range);
  }

  /** Declares a name, reporting FLOW119 if it would hide a visible one. */
  declare(scope: Scope, b: Binding): void {
    const hidden = scope.declare(b);
    if (hidden !== undefined) {
      this.ctx.report.error(
        Codes.Shadowing,
        `'${b.name}' would hide the ${bindingWord(hidden.kind)} '${hidden.name}' (line ${hidden.range.start.line}): choose another name`,
        b.range,
      );
    }
  }

  private statement(s: Statement, env: StmtEnv): void {
    const report = this.ctx.report;
    switch (s.kind) {
      case "let": {
        let t = this.exprs.check(s.value, env);
        if (t.kind === "null") {
          report.error(Codes.CannotInferType, `cannot tell the type of '${s.name.name}' from null`, s.value.range);
          t = T.error;
        }
        this.declare(env.scope, { kind: "let", name: s.name.name, type: t, range: s.name.range });
        return;
      }
      case "assign":
        this.assign(s, env);
        return;
      case "sendEmail": {
        const parts: [Expr, string][] = [[s.to, "the address"], [s.subject, "the subject"], [s.body, "the body"]];
        if (s.replyTo) parts.push([s.replyTo, "the replyTo address"]);
        if (s.cc) parts.push([s.cc, "the cc address"]);
        for (const [e, what] of parts) {
          const t = this.exprs.check(e, env);
          if (t.kind !== "error" && t.kind !== "string") {
            report.error(Codes.TypeMismatch, `${what} of an email must be a string, found ${showType(t)}`, e.range);
          }
        }
        return;
      }
      case "sendWebhook":
      case "sendMessage":
        this.delivery(s, env);
        return;
      case "dropSlot": {
        if (env.state?.slots.has(s.alias.name)) return;
        if (this.ctx.aliasStates.has(s.alias.name)) {
          report.error(
            Codes.AliasNotInScope,
            `'${s.alias.name}' is a slot of state ${this.ctx.aliasStates.get(s.alias.name)!.join(", ")}: drop slot names a slot of this state`,
            s.alias.range,
          );
        } else {
          const where = env.state ? `state ${env.state.name} has` : "there is";
          report.error(Codes.UnknownAlias, `${where} no slot alias '${s.alias.name}'`, s.alias.range);
        }
        return;
      }
      case "if": {
        this.condition(s.condition, env, "the condition of if");
        // The then block sees what the condition proves non-null, less what the block itself assigns.
        const assigned = assignedIn(s.then);
        const proved = nonNullWhen(s.condition, true).filter((p) => !assigned.has(p));
        this.block(s.then, proved.length > 0 ? { ...env, nonNull: withNonNull(env.nonNull, proved) } : env);
        if (s.else !== null) this.block(s.else, env);
        return;
      }
      case "result":
        // v0.5 Results: the fields against the workflow's `returns` event
        checkResult({ report, exprs: this.exprs }, s, env, this.ctx.returns ?? null);
        return;
      case "expr": {
        this.exprs.check(s.expr, env);
        if (s.expr.kind !== "call") {
          report.error(Codes.ExpressionNotCall, "this value is not used: only a call can stand alone as a statement", s.range);
          return;
        }
        const callee = s.expr.callee;
        if (callee.kind === "member" && callee.property.name === "CallbackUrl" && callee.object.kind === "name") {
          const b = env.scope.lookup(callee.object.name);
          if (b?.kind === "alias" && b.slot && (!b.slot.fannedOut || env.elementAlias === b.slot.alias) && env.closedAlias !== b.slot.alias) {
            report.warning(
              Codes.CallbackUrlDiscarded,
              `the link minted here is discarded and can never be read again (minting still retires the previous link of '${b.slot.alias}')`,
              s.range,
            );
          }
        }
        return;
      }
    }
  }

  /** `send webhook` / `send message` (issue 18; lang/send-delivery.ts): the type rule. */
  private delivery(s: SendWebhookStmt | SendMessageStmt, env: StmtEnv): void {
    const report = this.ctx.report;
    const strings: [Expr | null, string][] =
      s.kind === "sendWebhook" ? [[s.type, "the type of a webhook"]] : [[s.text, "the text of a message"], [s.link, "the link of a message"], [s.label, "the label of a message"]];
    for (const [e, what] of strings) {
      if (e === null) continue;
      const t = this.exprs.check(e, env);
      if (t.kind !== "error" && t.kind !== "string") report.error(Codes.TypeMismatch, `${what} must be a string, found ${showType(t)}`, e.range);
    }
    if (s.kind !== "sendWebhook") {
      if (s.answer) this.answer(s.answer, env);
      return;
    }
    for (const f of s.data) {
      const t = this.exprs.check(f.value, env);
      if (t.kind === "slot" || t.kind === "matcher") {
        report.error(Codes.TypeMismatch, `'${f.name.name}' must be a value with a JSON form, found ${showType(t)}`, f.value.range);
      }
    }
  }

  /** `answer: alias` of `send message` (v0.4 "Answers inside Slack"): a slot of this state, not fanned out. */
  private answer(alias: Ident, env: StmtEnv): void {
    const report = this.ctx.report;
    const slot = env.state?.slots.get(alias.name);
    if (slot?.call) {
      report.error(Codes.AnswerNotASlot, `'${alias.name}' is a call, answered by its callee: a message answers a person's slot (subscribe)`, alias.range);
      return;
    }
    if (slot) {
      if (slot.fannedOut) report.error(Codes.AnswerNotASlot, `'${alias.name}' is fanned out (one slot per element): a message answers one slot`, alias.range);
      return;
    }
    const other = this.ctx.aliasStates.get(alias.name);
    const where = env.state ? `state ${env.state.name} has` : "outside a state there is";
    report.error(
      Codes.AnswerNotASlot,
      other ? `'${alias.name}' is a slot of state ${other.join(", ")}: 'answer' names a slot of this state` : `${where} no slot alias '${alias.name}' for 'answer'`,
      alias.range,
    );
  }

  private assign(s: AssignStmt, env: StmtEnv): void {
    const report = this.ctx.report;
    const valueType = this.exprs.check(s.value, env);
    const [head, ...rest] = s.target;
    const b = this.exprs.resolve(head.name, head.range, env);
    if (b === null) return;
    if (rest.length === 0) {
      if (b.kind !== "let") {
        report.error(Codes.ReadOnlyAssignment, `cannot assign to the ${bindingWord(b.kind)} '${head.name}': it is read-only`, head.range);
      } else if (!assignable(valueType, b.type)) {
        report.error(Codes.TypeMismatch, `cannot assign ${showType(valueType)} to '${head.name}' of type ${showType(b.type)}${isOptional(b.type) ? "" : nullFix(s.value, valueType)}`, s.value.range);
      }
      return;
    }
    const path = pathRange(s.target);
    if (b.kind !== "workflowParam" || b.type.kind !== "entity") {
      if (b.type.kind === "entity" || b.kind === "alias") {
        report.error(
          Codes.ReadOnlyAssignment,
          `the ${bindingWord(b.kind)} '${head.name}' is read-only: only the fields of entity-typed workflow parameters can be assigned`,
          path,
        );
      } else {
        report.error(
          Codes.InvalidAssignmentPath,
          `'${head.name}' is not an entity-typed workflow parameter: only its fields (param.field) can be assigned`,
          path,
        );
      }
      return;
    }
    if (rest.length > 1) {
      report.error(Codes.InvalidAssignmentPath, `assign one field of '${head.name}' at a time (${head.name}.field = …)`, path);
      return;
    }
    const entity = this.ctx.entities.get(b.type.name);
    const field = entity?.fields.get(rest[0].name);
    if (entity === undefined) return;
    if (field === undefined) {
      report.error(Codes.UnknownMember, `entity ${entity.name} has no field '${rest[0].name}'`, rest[0].range);
      return;
    }
    if (!assignable(valueType, field.type)) {
      report.error(
        Codes.TypeMismatch,
        `cannot assign ${showType(valueType)} to ${head.name}.${field.name} of type ${showType(field.type)}${isOptional(field.type) ? "" : nullFix(s.value, valueType)}`,
        s.value.range,
      );
    }
  }
}

function pathRange(path: Ident[]): Range {
  return { start: path[0].range.start, end: path[path.length - 1].range.end };
}
