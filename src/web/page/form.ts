/**
 * The form of a responder page, generated from an event's parameters (issue 10 §1): one labelled
 * control per parameter, chosen by its type —
 *
 *   bool        a yes/no choice (radio buttons in a fieldset); `bool?` adds "No answer" (null)
 *   string      a text field, or a text area with `@multiline`; `string?` sends null when left empty;
 *               with `page.options` (the allowed answers of a built-in's question, issue 33 item 3;
 *               engine/views/responder.ts) one radio button per answer (`data-kind="choice"`),
 *               `string?` adds "No answer" (null)
 *   int         a number field with step 1; decimal a number field with any step
 *   datetime    a date-and-time field to the minute plus an explicit UTC offset (the browser's own at
 *               the chosen day preselected by the script), sent as RFC 3339 (`2026-11-21T09:30:00+01:00`)
 *   date        a date picker, sent as `YYYY-MM-DD`
 *   duration    a number and a unit (minutes, hours, days), sent as ISO 8601 (`PT15M`, `P3D`)
 *   list<T>     rows of T's control, with "Add" and "Remove" buttons; `list<T>?` adds "None" (null)
 *   T?          left empty means null (the help line says so)
 *   list<list<T>> and other nested shapes: a text area for the JSON value, typed by hand
 *
 * Each parameter's block carries `data-param`, `data-label` (the label text, for the words of its
 * field errors), `data-kind` and `data-optional`; the page script
 * (script.ts) reads the controls back into the JSON body by these. Every control also carries a
 * `name`, so that the same form works as a plain HTML form post (the task page, v0.4 "People
 * inside the company"; form-body.ts reads such a post back into the JSON body): `<param>` for the
 * value (the radio group of a bool), `<param>.offset` / `<param>.unit` for a datetime's offset and
 * a duration's unit, `<param>.<row>` (and `.offset` / `.unit`) for a list item, `<param>.none` for
 * a list's "None". Each block has an error line
 * (`id="err-<name>"`, referenced by `aria-describedby`) that the script fills from a 422's
 * `errors`. Labels and help come from `@label` / `@help`, else the parameter's name.
 *
 * Constraints (v0.5, issue 43) add HTML hints (`hints`: min, max, minlength, maxlength, pattern,
 * type=email); `@oneOf` shows radio buttons. The forms are `novalidate`: the server decides.
 */
import type { CompiledParam, ParamRules, TypeSpec } from "../../lang/compiled.js";
import { t } from "../../i18n/index.js";
import { html, type Html } from "./html.js";

/**
 * A form posted without script (`post` mode of `field`): the values to show again, the refusal
 * beside each parameter (the reader's words), and the row ids of each list parameter.
 */
export interface PostedForm {
  /** The submitted controls by name (form-body.ts's names); empty for a fresh form. */
  values: URLSearchParams;
  /** Parameter name → the sentence shown beside it. */
  errors: Record<string, string>;
  /** List parameter name → its rows' ids, in order (form-body.ts `listRows`); a fresh form has one blank row. */
  rows: Record<string, string[]>;
}

/** UTC offsets in quarter hours from −12:00 to +14:00, as RFC 3339 writes them ("Z" for zero). */
export const OFFSETS: string[] = (() => {
  const out: string[] = [];
  for (let m = -12 * 60; m <= 14 * 60; m += 15) {
    if (m === 0) {
      out.push("Z");
      continue;
    }
    const a = Math.abs(m);
    out.push(`${m < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`);
  }
  return out;
})();

function humanName(name: string): string {
  const words = name.replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The help line's hint for an optional parameter: "Optional: leave it empty for none.", or just
 * "Leave it empty for none." when the author's `@help` already says "Optional…" (the agents'
 * built-ins read "Optional: … Optional: …" before v0.5); in the page's language.
 */
function optionalHint(type: TypeSpec, help: string | null | undefined, lang: string): string | null {
  if (!type.optional) return null;
  if (type.kind === "bool" || type.kind === "list") return null;
  return help && /^\s*optional\b/i.test(help) ? t(lang, "field.optionalLeaveEmpty") : t(lang, "field.optional");
}

/** Attributes to show a submitted value again (post mode). */
function shown(post: PostedForm | undefined, name: string): string | undefined {
  return post?.values.get(name) ?? undefined;
}

/** `aria-invalid="true"` when the parameter was refused (post mode). */
function invalid(post: PostedForm | undefined, param: string): Html | null {
  return post?.errors[param] ? html` aria-invalid="true"` : null;
}

/** True when `pattern` (RE2, already checked by the compiler) also compiles as an HTML `pattern` (a JavaScript `v`-flag RegExp). */
function validAsHtmlPattern(pattern: string): boolean {
  try {
    new RegExp(`^(?:${pattern})$`, "v");
    return true;
  } catch {
    return false;
  }
}

/**
 * The HTML attributes that hint a parameter's constraints to the browser (v0.5, issue 43): `min` /
 * `max` (numbers; dates, `today` as today's UTC day), `minlength` / `maxlength` (and `required` for
 * `@minLength(1)` or more on a `string`), `pattern` only when the RE2 pattern is also a valid
 * JavaScript pattern. Hints only: the forms are `novalidate` and the server decides (body.ts).
 */
function hints(type: TypeSpec, rules: ParamRules | undefined): Html | null {
  if (!rules) return null;
  const day = (v: number | string) => (v === "today" ? new Date().toISOString().slice(0, 10) : String(v));
  const parts: Html[] = [];
  if (rules.min !== undefined) parts.push(html` min="${day(rules.min)}"`);
  if (rules.max !== undefined) parts.push(html` max="${day(rules.max)}"`);
  if (rules.minLength !== undefined) parts.push(html` minlength="${rules.minLength}"`);
  if (rules.maxLength !== undefined) parts.push(html` maxlength="${rules.maxLength}"`);
  if (rules.minLength !== undefined && rules.minLength > 0 && type.kind === "string" && !type.optional) parts.push(html` required`);
  if (rules.pattern !== undefined && validAsHtmlPattern(rules.pattern)) parts.push(html` pattern="${rules.pattern}"`);
  return parts.length > 0 ? html`${parts}` : null;
}

/** The control (inputs only, no label) for a value of `type` named `name` whose element id is `id`. */
/**
 * One parameter's input. `offset`: the UTC offset a `datetime`'s offset selector starts on when
 * nothing was posted for it (an entry of OFFSETS; "Z", UTC, unless the page passes the reader's:
 * the task page, the signed-in person's zone).
 */
function control(
  type: TypeSpec,
  id: string,
  name: string,
  describedBy: string,
  multiline: boolean,
  labelText: string,
  lang: string,
  post?: PostedForm,
  param = name,
  rules?: ParamRules,
  offset = "Z",
): Html {
  const req = type.optional ? "" : " required";
  const v = shown(post, name);
  const bad = invalid(post, param);
  const value = v === undefined ? null : html` value="${v}"`;
  const hint = hints(type, rules);
  switch (type.kind) {
    case "string":
      return multiline
        ? html`<textarea id="${id}" rows="4" name="${name}" aria-describedby="${describedBy}"${bad}${hint} data-value>${v ?? ""}</textarea>`
        : html`<input id="${id}" type="${rules?.email ? "email" : "text"}" autocomplete="off" name="${name}" aria-describedby="${describedBy}"${bad}${value}${hint} data-value>`;
    case "int":
      return html`<input id="${id}" type="number" step="1" inputmode="numeric" name="${name}" aria-describedby="${describedBy}"${bad}${value}${hint} data-value${req}>`;
    case "decimal":
      return html`<input id="${id}" type="number" step="any" inputmode="decimal" name="${name}" aria-describedby="${describedBy}"${bad}${value}${hint} data-value${req}>`;
    case "datetime": {
      const off = shown(post, `${name}.offset`) ?? (OFFSETS.includes(offset) ? offset : "Z");
      return html`<span class="pair"><input id="${id}" type="datetime-local" name="${name}" aria-describedby="${describedBy}"${bad}${value} data-value${req}>
<select id="${id}-offset" name="${name}.offset" aria-label="${t(lang, "field.offsetLabel", { label: labelText })}" data-offset>${OFFSETS.map((o) => html`<option value="${o}"${o === off ? " selected" : ""}>${o === "Z" ? "UTC" : `UTC${o}`}</option>`)}</select></span>`;
    }
    case "date":
      return html`<input id="${id}" type="date" name="${name}" aria-describedby="${describedBy}"${bad}${value}${hint} data-value${req}>`;
    case "duration": {
      const unit = shown(post, `${name}.unit`) ?? "H";
      const opt = (u: string, text: string) => html`<option value="${u}"${u === unit ? " selected" : ""}>${text}</option>`;
      return html`<span class="pair"><input id="${id}" type="number" min="0" step="1" inputmode="numeric" name="${name}" aria-describedby="${describedBy}"${bad}${value} data-value${req}>
<select id="${id}-unit" name="${name}.unit" aria-label="${t(lang, "field.unitLabel", { label: labelText })}" data-unit>${opt("M", t(lang, "field.minutes"))}${opt("H", t(lang, "field.hours"))}${opt("D", t(lang, "field.days"))}</select></span>`;
    }
    default:
      // A list of lists (or any shape without a control of its own): JSON typed by hand.
      return html`<textarea id="${id}" rows="3" name="${name}" aria-describedby="${describedBy}"${bad} data-value data-json>${v ?? ""}</textarea>`;
  }
}

/** The error line under a parameter: hidden and empty unless a post was refused there. */
function errorLine(p: CompiledParam, post?: PostedForm): Html {
  const e = post?.errors[p.name];
  return e ? html`<p class="error" id="err-${p.name}">${e}</p>` : html`<p class="error" id="err-${p.name}" hidden></p>`;
}

/** A bool's radio group (its own fieldset and legend). */
function boolField(p: CompiledParam, labelText: string, describedBy: string, helpLine: Html, lang: string, post?: PostedForm): Html {
  const given = shown(post, p.name);
  const radio = (value: string, text: string, checked = false) =>
    html`<label class="choice"><input type="radio" name="${p.name}" value="${value}"${(given === undefined ? checked : given === value) ? " checked" : ""}${p.type.optional ? "" : " required"}${invalid(post, p.name)}> ${text}</label>`;
  return html`<fieldset class="field" data-param="${p.name}" data-kind="bool" data-optional="${String(p.type.optional)}" data-label="${labelText}" aria-describedby="${describedBy}">
<legend>${labelText}</legend>${helpLine}
<div class="choices">${radio("true", t(lang, "field.yes"))}${radio("false", t(lang, "field.no"))}${p.type.optional ? radio("null", t(lang, "field.noAnswer"), true) : null}</div>
${errorLine(p, post)}
</fieldset>`;
}

/** A string's allowed answers as a radio group (its own fieldset and legend); `string?` adds "No answer". */
function choiceField(p: CompiledParam, options: string[], labelText: string, describedBy: string, helpLine: Html, lang: string, post?: PostedForm): Html {
  // script mode: the page script reads the group by its id-like name; post mode: the parameter's name (form-body.ts)
  const id = post ? p.name : `f-${p.name}`;
  const given = shown(post, p.name);
  const req = p.type.optional ? "" : " required";
  return html`<fieldset class="field" data-param="${p.name}" data-kind="choice" data-optional="${String(p.type.optional)}" data-label="${labelText}" aria-describedby="${describedBy}">
<legend>${labelText}</legend>${helpLine}
<div class="choices">${options.map((o) => html`<label class="choice"><input type="radio" name="${id}" value="${o}"${given === o ? " checked" : ""}${req}> ${o}</label>`)}${
    p.type.optional ? html`<label class="choice"><input type="radio" name="${id}" value="" data-null${given ? "" : " checked"}> ${t(lang, "field.noAnswer")}</label>` : null
  }</div>
${errorLine(p, post)}
</fieldset>`;
}

/**
 * One list row with id `rowId` (`__ID__` in the script's template). In post mode its "Remove"
 * button is a submit button (`_remove=<param>.<row>`): the server shows the form again without it.
 */
function listRow(p: CompiledParam, element: TypeSpec, rowId: string, labelText: string, lang: string, post?: PostedForm, offset = "Z"): Html {
  const name = `${p.name}.${rowId}`;
  const itemId = `f-${p.name}-${rowId}`;
  const remove = post
    ? html`<button type="submit" class="secondary" name="_remove" value="${name}" formnovalidate>${t(lang, "field.removeItem")}</button>`
    : html`<button type="button" class="secondary" data-remove>${t(lang, "field.removeItem")}</button>`;
  if (element.kind === "bool") {
    const given = shown(post, name);
    const radio = (value: string, text: string, req: boolean) =>
      html`<label class="choice"><input type="radio" name="${name}" value="${value}"${given === value ? " checked" : ""}${req ? " required" : ""}> ${text}</label>`;
    return html`<div class="row" data-row><fieldset class="item" data-kind="bool" data-optional="${String(element.optional)}"><legend>${t(lang, "field.item")}</legend>
${radio("true", t(lang, "field.yes"), true)}${radio("false", t(lang, "field.no"), false)}</fieldset>
${remove}</div>`;
  }
  return html`<div class="row" data-row><span class="item" data-kind="${element.kind === "list" ? "json" : element.kind}" data-optional="${String(element.optional)}"><label for="${itemId}">${t(lang, element.kind === "list" ? "field.itemJson" : "field.item")}</label>
${control(element, itemId, name, `err-${p.name}`, false, t(lang, "field.itemLabel", { label: labelText }), lang, post, p.name, undefined, offset)}</span>
${remove}</div>`;
}

/**
 * A list's rows, a template for one more row, and its buttons. Script mode: no rows, "Add" and
 * "Remove" are script buttons. Post mode: the rows of `post.rows`, "Add" is a submit button
 * (`_add=<param>`) and the server shows the form again with one more blank row.
 */
function listField(p: CompiledParam, labelText: string, describedBy: string, helpLine: Html, lang: string, post?: PostedForm, offset = "Z"): Html {
  const type = p.type as Extract<TypeSpec, { kind: "list" }>;
  const element = type.element;
  const rows = post ? (post.rows[p.name] ?? []).map((id) => listRow(p, element, id, labelText, lang, post, offset)) : [];
  const add = post
    ? html`<button type="submit" class="secondary" name="_add" value="${p.name}" formnovalidate>${t(lang, "field.addItem")}</button>`
    : html`<button type="button" class="secondary" data-add>${t(lang, "field.addItem")}</button>`;
  const none = post?.values.get(`${p.name}.none`) === "true";
  return html`<fieldset class="field" data-param="${p.name}" data-kind="list" data-optional="${String(type.optional)}" data-label="${labelText}" aria-describedby="${describedBy}">
<legend>${labelText}</legend>${helpLine}
<div class="rows" data-rows>${rows}</div>
${post ? null : html`<template data-template>${listRow(p, element, "__ID__", labelText, lang)}</template>`}
<p class="buttons">${add}${
    type.optional ? html` <label class="choice"><input type="checkbox" name="${p.name}.none" value="true"${none ? " checked" : ""} data-none> ${t(lang, "field.none")}</label>` : null
  }</p>
${errorLine(p, post)}
</fieldset>`;
}

/**
 * One parameter's block: label, help, control, error line. Without `post` it is the responder
 * page's (its script adds list rows and shows refusals); with `post` it is a plain HTML form's
 * (the task page): values shown again, the refusal beside the field, server-rendered list rows.
 * `offset`: where a `datetime`'s offset selector starts when nothing was posted for it — "Z" (UTC,
 * the responder page's) unless given; the task page gives the signed-in person's zone's current
 * offset (i18n `zoneOffset`). An offset that is not an entry of OFFSETS starts on UTC.
 */
export function field(p: CompiledParam, post?: PostedForm, lang = "en", offset = "Z"): Html {
  const labelText = labelOf(p, lang);
  const help = helpOf(p, lang);
  const helps = [help, p.page?.options?.length ? null : optionalHint(p.type, help, lang)].filter((h): h is string => !!h);
  const helpId = `help-${p.name}`;
  const describedBy = helps.length > 0 ? `${helpId} err-${p.name}` : `err-${p.name}`;
  const helpLine = helps.length > 0 ? html`<p class="help" id="${helpId}">${helps.join(" ")}</p>` : html``;
  if (p.type.kind === "bool") return boolField(p, labelText, describedBy, helpLine, lang, post);
  if (p.type.kind === "string" && p.page?.options?.length) return choiceField(p, p.page.options, labelText, describedBy, helpLine, lang, post);
  // v0.5: `@oneOf(…)` shows its choices as radio buttons, like a built-in's allowed answers
  if (p.type.kind === "string" && p.rules?.oneOf?.length) return choiceField(p, p.rules.oneOf, labelText, describedBy, helpLine, lang, post);
  if (p.type.kind === "list") return listField(p, labelText, describedBy, helpLine, lang, post, offset);
  const id = `f-${p.name}`;
  return html`<div class="field" data-param="${p.name}" data-kind="${p.type.kind}" data-optional="${String(p.type.optional)}" data-label="${labelText}">
<label for="${id}">${labelText}</label>${helpLine}
${control(p.type, id, p.name, describedBy, p.page?.multiline === true, labelText, lang, post, p.name, p.rules, offset)}
${errorLine(p, post)}
</div>`;
}

/** The label a parameter's field shows in `lang` (`@label`'s variant for it, else `@label`, else its name made readable). */
export function labelOf(p: CompiledParam, lang = "en"): string {
  return p.page?.labels?.[lang] ?? p.page?.label ?? humanName(p.name);
}

/** The help line of a parameter in `lang` (`@help`'s variant for it, else `@help`), or null. */
export function helpOf(p: CompiledParam, lang = "en"): string | null {
  return p.page?.helps?.[lang] ?? p.page?.help ?? null;
}
