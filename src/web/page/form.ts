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
 * (script.ts) reads the controls back into the JSON body by these. Each block has an error line
 * (`id="err-<name>"`, referenced by `aria-describedby`) that the script fills from a 422's
 * `errors`. Labels and help come from `@label` / `@help`, else the parameter's name.
 */
import type { CompiledParam, TypeSpec } from "../../lang/compiled.js";
import { html, type Html } from "./html.js";

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

function optionalHint(type: TypeSpec): string | null {
  if (!type.optional) return null;
  if (type.kind === "bool" || type.kind === "list") return null;
  return "Optional: leave it empty for none.";
}

/** The control (inputs only, no label) for a value of `type` whose element id is `id`. */
function control(type: TypeSpec, id: string, describedBy: string, multiline: boolean, labelText: string): Html {
  const req = type.optional ? "" : " required";
  switch (type.kind) {
    case "string":
      return multiline
        ? html`<textarea id="${id}" rows="4" aria-describedby="${describedBy}" data-value></textarea>`
        : html`<input id="${id}" type="text" autocomplete="off" aria-describedby="${describedBy}" data-value>`;
    case "int":
      return html`<input id="${id}" type="number" step="1" inputmode="numeric" aria-describedby="${describedBy}" data-value${req}>`;
    case "decimal":
      return html`<input id="${id}" type="number" step="any" inputmode="decimal" aria-describedby="${describedBy}" data-value${req}>`;
    case "datetime":
      return html`<span class="pair"><input id="${id}" type="datetime-local" aria-describedby="${describedBy}" data-value${req}>
<select id="${id}-offset" aria-label="${labelText}: offset from UTC" data-offset>${OFFSETS.map((o) => html`<option value="${o}"${o === "Z" ? " selected" : ""}>${o === "Z" ? "UTC" : `UTC${o}`}</option>`)}</select></span>`;
    case "date":
      return html`<input id="${id}" type="date" aria-describedby="${describedBy}" data-value${req}>`;
    case "duration":
      return html`<span class="pair"><input id="${id}" type="number" min="0" step="1" inputmode="numeric" aria-describedby="${describedBy}" data-value${req}>
<select id="${id}-unit" aria-label="${labelText}: unit" data-unit><option value="M">minutes</option><option value="H" selected>hours</option><option value="D">days</option></select></span>`;
    default:
      // A list of lists (or any shape without a control of its own): JSON typed by hand.
      return html`<textarea id="${id}" rows="3" aria-describedby="${describedBy}" data-value data-json></textarea>`;
  }
}

/** A bool's radio group (its own fieldset and legend). */
function boolField(p: CompiledParam, labelText: string, describedBy: string, helpLine: Html): Html {
  const id = `f-${p.name}`;
  const radio = (value: string, text: string, checked = false) =>
    html`<label class="choice"><input type="radio" name="${id}" value="${value}"${checked ? " checked" : ""}${p.type.optional ? "" : " required"}> ${text}</label>`;
  return html`<fieldset class="field" data-param="${p.name}" data-kind="bool" data-optional="${String(p.type.optional)}" data-label="${labelText}" aria-describedby="${describedBy}">
<legend>${labelText}</legend>${helpLine}
<div class="choices">${radio("true", "Yes")}${radio("false", "No")}${p.type.optional ? radio("null", "No answer", true) : null}</div>
<p class="error" id="err-${p.name}" hidden></p>
</fieldset>`;
}

/** A string's allowed answers as a radio group (its own fieldset and legend); `string?` adds "No answer". */
function choiceField(p: CompiledParam, options: string[], labelText: string, describedBy: string, helpLine: Html): Html {
  const id = `f-${p.name}`;
  const req = p.type.optional ? "" : " required";
  return html`<fieldset class="field" data-param="${p.name}" data-kind="choice" data-optional="${String(p.type.optional)}" data-label="${labelText}" aria-describedby="${describedBy}">
<legend>${labelText}</legend>${helpLine}
<div class="choices">${options.map((o) => html`<label class="choice"><input type="radio" name="${id}" value="${o}"${req}> ${o}</label>`)}${
    p.type.optional ? html`<label class="choice"><input type="radio" name="${id}" value="" data-null checked> No answer</label>` : null
  }</div>
<p class="error" id="err-${p.name}" hidden></p>
</fieldset>`;
}

/** A list's rows, a template for one more row, and its buttons. */
function listField(p: CompiledParam, labelText: string, describedBy: string, helpLine: Html): Html {
  const type = p.type as Extract<TypeSpec, { kind: "list" }>;
  const element = type.element;
  const itemId = `f-${p.name}-__ID__`;
  const row =
    element.kind === "bool"
      ? html`<div class="row" data-row><fieldset class="item" data-kind="bool" data-optional="${String(element.optional)}"><legend>Item</legend>
<label class="choice"><input type="radio" name="${itemId}" value="true" required> Yes</label><label class="choice"><input type="radio" name="${itemId}" value="false"> No</label></fieldset>
<button type="button" class="secondary" data-remove>Remove item</button></div>`
      : html`<div class="row" data-row><span class="item" data-kind="${element.kind === "list" ? "json" : element.kind}" data-optional="${String(element.optional)}"><label for="${itemId}">Item${element.kind === "list" ? " (as JSON)" : ""}</label>
${control(element, itemId, `err-${p.name}`, false, `${labelText}, item`)}</span>
<button type="button" class="secondary" data-remove>Remove item</button></div>`;
  return html`<fieldset class="field" data-param="${p.name}" data-kind="list" data-optional="${String(type.optional)}" data-label="${labelText}" aria-describedby="${describedBy}">
<legend>${labelText}</legend>${helpLine}
<div class="rows" data-rows></div>
<template data-template>${row}</template>
<p class="buttons"><button type="button" class="secondary" data-add>Add an item</button>${
    type.optional ? html` <label class="choice"><input type="checkbox" data-none> None (send no list)</label>` : null
  }</p>
<p class="error" id="err-${p.name}" hidden></p>
</fieldset>`;
}

/** One parameter's block: label, help, control, error line. */
export function field(p: CompiledParam): Html {
  const labelText = p.page?.label ?? humanName(p.name);
  const helps = [p.page?.help, p.page?.options?.length ? null : optionalHint(p.type)].filter((h): h is string => !!h);
  const helpId = `help-${p.name}`;
  const describedBy = helps.length > 0 ? `${helpId} err-${p.name}` : `err-${p.name}`;
  const helpLine = helps.length > 0 ? html`<p class="help" id="${helpId}">${helps.join(" ")}</p>` : html``;
  if (p.type.kind === "bool") return boolField(p, labelText, describedBy, helpLine);
  if (p.type.kind === "string" && p.page?.options?.length) return choiceField(p, p.page.options, labelText, describedBy, helpLine);
  if (p.type.kind === "list") return listField(p, labelText, describedBy, helpLine);
  const id = `f-${p.name}`;
  return html`<div class="field" data-param="${p.name}" data-kind="${p.type.kind}" data-optional="${String(p.type.optional)}" data-label="${labelText}">
<label for="${id}">${labelText}</label>${helpLine}
${control(p.type, id, describedBy, p.page?.multiline === true, labelText)}
<p class="error" id="err-${p.name}" hidden></p>
</div>`;
}
