/**
 * A tagged template for HTML whose interpolated values are escaped by `escape-html` (the jshttp
 * package Express and Koa's ecosystem use): `html\`<p>${text}</p>\`` escapes `text`; a value that
 * is itself an `Html` fragment (another `html\`…\``, or an array of them) is inserted as it is.
 * Author text and anything read from a run only ever enters a page through this tag, so an entity
 * value of `<script>` shows as text (issue 10 §1 "Author text is escaped").
 *
 * Values: string, number, boolean (as text), null/undefined/false (as nothing), Html, Html[].
 * Attribute values must be quoted in the template (`value="${v}"`): escape-html escapes `"` and `'`.
 */
import escapeHtml from "escape-html";

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = string | number | boolean | null | undefined | Html | Html[];

function part(v: Part): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map((h) => h.text).join("");
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Trusted markup written in this code base (never author or run text). */
export function raw(markup: string): Html {
  return new Html(markup);
}
