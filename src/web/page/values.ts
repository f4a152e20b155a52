/**
 * An answer's values as an insider's page shows them (issue 43 item 4: the task page after an
 * answer, the inbox's done view): one `<dl>` row per event parameter, labelled as the form labels
 * it (page/form.ts `labelOf`: the author's `@label`, else the parameter's name), each value written
 * the way the responder page writes values (document.ts `markedHtml`): numbers by
 * `Intl.NumberFormat` in the page's language, bools as the language's Yes/No, datetimes as a
 * `<time datetime>` in the reader's time zone (`zone`, Reader.zone), else in UTC, with the offset
 * written (`timeHtml`); lists as a list, entities as a
 * nested `<dl>`; text escaped through the `html` tag. A value the parameters do not name (an
 * older version's) is shown under its own name. Nothing here reads the database.
 */
import type { CompiledParam, TypeSpec } from "../../lang/compiled.js";
import { formatNumber, t, yesNo } from "../../i18n/index.js";
import { nextDepth } from "../../json/depth.js";
import { timeHtml } from "./document.js";
import { labelOf } from "./form.js";
import { html, type Html } from "./html.js";

/**
 * One value as HTML in `lang`, by its declared type when known (`type` null: by its JSON shape);
 * datetimes in the reader's time zone `zone` (null: UTC).
 */
export function valueHtml(v: unknown, type: TypeSpec | null, lang: string, depth = 0, zone: string | null = null): Html {
  if (v === null || v === undefined || v === "") return html`<span class="empty">${t(lang, "task.emptyValue")}</span>`;
  if (typeof v === "boolean") return html`${yesNo(lang, v)}`;
  if (typeof v === "number") return html`<data class="num" value="${String(v)}">${formatNumber(lang, v)}</data>`;
  if (typeof v === "string") {
    if (type?.kind === "datetime") {
      const d = new Date(v);
      if (!Number.isNaN(d.getTime())) return timeHtml(d, lang, zone);
    }
    if (type?.kind === "decimal" && /^-?\d+(\.\d+)?$/.test(v)) return html`<data class="num" value="${v}">${formatNumber(lang, Number(v))}</data>`;
    return html`${v}`;
  }
  if (depth > 16) return html`…`;
  if (Array.isArray(v)) {
    const element = type?.kind === "list" ? type.element : null;
    return html`<ul class="values">${v.map((x) => html`<li>${valueHtml(x, element, lang, nextDepth(depth), zone)}</li>`)}</ul>`;
  }
  if (typeof v === "object") {
    return html`<dl class="values">${Object.entries(v as Record<string, unknown>).map(([k, x]) => html`<dt>${k}</dt><dd>${valueHtml(x, null, lang, nextDepth(depth), zone)}</dd>`)}</dl>`;
  }
  return html`${String(v)}`;
}

/**
 * An answer's arguments `args` (the slot's `args`, JSON form) as a `<dl class="answer">` in the
 * order of `params`, then any other names; "no fields" for an answer without any. Datetimes in
 * `zone` (the reader's time zone; null: UTC).
 */
export function answerHtml(params: CompiledParam[], args: Record<string, unknown> | null, lang: string, id?: string, zone: string | null = null): Html {
  const given = args ?? {};
  const rows: Html[] = [];
  for (const p of params) rows.push(html`<dt>${labelOf(p, lang)}</dt><dd>${valueHtml(given[p.name], p.type, lang, 0, zone)}</dd>`);
  for (const [k, v] of Object.entries(given)) if (!params.some((p) => p.name === k)) rows.push(html`<dt>${k}</dt><dd>${valueHtml(v, null, lang, 0, zone)}</dd>`);
  if (rows.length === 0) return html`<p class="answer"${id ? html` id="${id}"` : null}>${t(lang, "task.noFields")}</p>`;
  return html`<dl class="answer"${id ? html` id="${id}"` : null}>${rows}</dl>`;
}
