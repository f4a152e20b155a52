/**
 * What the language server says about the annotations of event parameters (docs/language.md "The
 * responder page" and, v0.5 issue 43, "Constraints on event parameters"): the completion items
 * offered after `@` in a declaration, and the hover of an annotation's name.
 */
export interface AnnotationDoc {
  /** How it is written, with a placeholder for its argument. */
  signature: string;
  /** The snippet inserted by completion (LSP snippet syntax). */
  snippet: string;
  text: string;
}

export const ANNOTATIONS: Record<string, AnnotationDoc> = {
  label: { signature: '@label("…")', snippet: 'label("$1")', text: "The field's label on the responder page, the task page and in Slack." },
  help: { signature: '@help("…")', snippet: 'help("$1")', text: "A line of help under the field." },
  multiline: { signature: "@multiline", snippet: "multiline", text: "A `string` parameter gets a text area." },
  min: {
    signature: "@min(n)",
    snippet: "min($1)",
    text: 'Constraint (int, decimal, date): the smallest value accepted, inclusive; on a date a day `"YYYY-MM-DD"` or `today`. Checked on every door (link, task page, raise API, Slack, MCP): 422 `invalid-body` naming the rule.',
  },
  max: {
    signature: "@max(n)",
    snippet: "max($1)",
    text: "Constraint (int, decimal, date): the largest value accepted, inclusive; `@max(today)` on a date: not in the future. Checked on every door.",
  },
  minLength: { signature: "@minLength(n)", snippet: "minLength($1)", text: 'Constraint (string): at least n characters (UTF-16 code units); `@minLength(1)` refuses `""`. Checked on every door.' },
  maxLength: { signature: "@maxLength(n)", snippet: "maxLength($1)", text: "Constraint (string): at most n characters (UTF-16 code units). Checked on every door." },
  pattern: {
    signature: '@pattern("…")',
    snippet: 'pattern("$1")',
    text: "Constraint (string): the whole value matches this RE2 pattern, in linear time (no backreferences or look-arounds: FLOW132). Checked on every door.",
  },
  email: { signature: "@email", snippet: "email", text: "Constraint (string): one plain email address, as `send email to` checks it. Checked on every door." },
  oneOf: {
    signature: '@oneOf("a", "b", …)',
    snippet: 'oneOf("$1")',
    text: "Constraint (string): one of these values exactly; the pages show them as radio buttons. Checked on every door.",
  },
};
