/**
 * The one small inline script of a responder page (allowed by the page's CSP nonce; no other script
 * runs, nothing is loaded from elsewhere). It:
 *
 * - makes one `Idempotency-Key` per page load (crypto.randomUUID) and reuses it for every retry of
 *   the same answer, so a second click or a retry after a dropped connection gets the first
 *   outcome ("done") instead of 410 link-burned; after a definite refusal (4xx other than 409/429)
 *   it makes a new key, since the corrected answer is a new request;
 * - reads the form back into the JSON body (form.ts says how each control maps to JSON), POSTs it
 *   to the page's own URL, and shows the outcome in the live region: "done" for 200/202, a plain
 *   sentence for the states of a link and for a 422 (wording.ts, given to the script as WORDS), the
 *   problem's `detail` otherwise — for a `Requires` refusal the author's variant for the page's
 *   language (the problem's `wordings`), else their default wording; and each 422 `errors` entry
 *   next to its field in the author's words (`@label`: "“Quantity” is required…"; a broken rule in
 *   the page's language: "„Umsatz“: muss mindestens 0 sein."; aria-invalid);
 * - writes each `<time data-dt>` (a date the server wrote in UTC with the offset) in the browser's
 *   time zone, in the page's language (issue 42); all its sentences are in the page's language;
 * - keeps the answer and its key in sessionStorage (this tab only) until done, so that reloading
 *   the page after the answer went through — which now serves the "already used" page — can ask
 *   again with the same key and show "done" when the answer was this tab's own.
 */
export const PAGE_SCRIPT = String.raw`
(() => {
  "use strict";
  const WORDS = __PAGE_WORDS__;
  const storeKey = "slotflow-answer:" + location.pathname;
  const outcome = document.getElementById("outcome");
  const say = (text, kind) => {
    outcome.textContent = text;
    outcome.className = "outcome " + (kind || "");
  };
  const saved = () => {
    try { return JSON.parse(sessionStorage.getItem(storeKey) || "null"); } catch { return null; }
  };
  const remember = (v) => { try { v ? sessionStorage.setItem(storeKey, JSON.stringify(v)) : sessionStorage.removeItem(storeKey); } catch {} };
  // v0.4: the receipt of a completed answer, shown and offered as a download (a data: URL)
  const showReceipt = (receipt) => {
    const box = document.getElementById("receipt");
    if (!box || typeof receipt !== "string" || receipt === "") return;
    document.getElementById("receipt-text").value = receipt;
    const a = document.getElementById("receipt-download");
    a.href = "data:application/jose;charset=utf-8," + encodeURIComponent(receipt);
    box.hidden = false;
  };

  async function send(body, key) {
    const res = await fetch(location.pathname, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
      referrerPolicy: "no-referrer",
    });
    let problem = null;
    try { problem = await res.json(); } catch {}
    return { status: res.status, problem };
  }

  // Dates written in UTC with the offset (without script) are rewritten in the browser's time zone, in the page's language (issue 42).
  const dates = new Intl.DateTimeFormat(WORDS.dateLocale, WORDS.dateOptions);
  for (const el of document.querySelectorAll("time[data-dt]")) {
    const d = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(d.getTime())) el.textContent = dates.format(d);
  }

  const ended = document.querySelector("[data-ended]");
  if (ended) {
    // The link answered "already used": if this tab sent the answer that used it, say "done".
    const mine = saved();
    if (mine && mine.key && ended.getAttribute("data-ended") === "link-burned") {
      send(mine.body, mine.key).then((r) => {
        if (r.status === 200 || r.status === 202) {
          document.getElementById("ended-title").textContent = WORDS.doneTitle;
          say(WORDS.doneAgain, "done");
          if (r.status === 200 && r.problem) showReceipt(r.problem.receipt);
        }
      }, () => {});
    }
    return;
  }

  const form = document.getElementById("answer");
  if (!form) return;
  const submit = form.querySelector("button[type=submit]");
  submit.disabled = false;
  const js = document.getElementById("needs-js");
  if (js) js.hidden = true;
  let key = crypto.randomUUID();
  let pending = null;

  const h1 = document.querySelector("h1");
  if (h1) document.title = h1.textContent;

  // A datetime's offset: the browser's own at the chosen day and time (summer and winter differ),
  // until the person picks one themselves.
  const pad = (n) => String(n).padStart(2, "0");
  const offsetAt = (date) => {
    const m = -date.getTimezoneOffset();
    if (m === 0) return "Z";
    const a = Math.abs(m);
    return (m < 0 ? "-" : "+") + pad(Math.floor(a / 60)) + ":" + pad(a % 60);
  };
  const followOffset = (sel, input) => {
    if (sel.hasAttribute("data-picked")) return;
    const at = input && input.value ? new Date(input.value) : new Date();
    const o = offsetAt(Number.isNaN(at.getTime()) ? new Date() : at);
    if ([...sel.options].some((x) => x.value === o)) sel.value = o;
  };
  const offsetsIn = (root) => {
    for (const sel of root.querySelectorAll("select[data-offset]")) followOffset(sel, sel.parentElement.querySelector("[data-value]"));
  };
  offsetsIn(form);
  form.addEventListener("change", (e) => {
    const t = e.target;
    if (t.matches && t.matches("select[data-offset]")) t.setAttribute("data-picked", "");
  });
  form.addEventListener("input", (e) => {
    const t = e.target;
    if (!(t instanceof HTMLInputElement) || t.type !== "datetime-local") return;
    const sel = t.parentElement.querySelector("select[data-offset]");
    if (sel) followOffset(sel, t);
  });

  let rowCount = 0;
  const addRow = (field) => {
    const tpl = field.querySelector("template[data-template]");
    const holder = document.createElement("div");
    holder.innerHTML = tpl.innerHTML.replaceAll("__ID__", String(++rowCount));
    const row = holder.firstElementChild;
    field.querySelector("[data-rows]").appendChild(row);
    offsetsIn(row);
    const first = row.querySelector("input, textarea, select");
    if (first) first.focus();
  };
  form.addEventListener("click", (e) => {
    const t = e.target;
    if (!(t instanceof HTMLElement)) return;
    if (t.matches("[data-add]")) addRow(t.closest("[data-param]"));
    if (t.matches("[data-remove]")) {
      const field = t.closest("[data-param]");
      t.closest("[data-row]").remove();
      const add = field.querySelector("[data-add]");
      if (add) add.focus();
    }
  });

  // Reads one value block (a parameter or a list item) back into JSON.
  function read(el) {
    const kind = el.getAttribute("data-kind");
    const optional = el.getAttribute("data-optional") === "true";
    if (kind === "bool") {
      const c = el.querySelector("input[type=radio]:checked");
      if (!c) return undefined;
      return c.value === "null" ? null : c.value === "true";
    }
    if (kind === "choice") {
      const c = el.querySelector("input[type=radio]:checked");
      if (!c) return optional ? null : undefined;
      return c.hasAttribute("data-null") ? null : c.value;
    }
    if (kind === "list") {
      const none = el.querySelector("input[data-none]");
      if (none && none.checked) return null;
      return [...el.querySelector("[data-rows]").children].map((row) => read(row.querySelector(".item")));
    }
    const input = el.querySelector("[data-value]");
    const v = input.value;
    if (kind === "json") {
      if (v.trim() === "") return optional ? null : undefined;
      try { return JSON.parse(v); } catch { return v; }
    }
    if (v.trim() === "" && kind !== "string") return optional ? null : undefined;
    if (kind === "string") return v === "" && optional ? null : v;
    if (kind === "int" || kind === "decimal") return Number(v);
    if (kind === "datetime") {
      const off = el.querySelector("[data-offset]").value;
      return (v.length === 16 ? v + ":00" : v) + off;
    }
    if (kind === "duration") {
      const unit = el.querySelector("[data-unit]").value;
      return (unit === "D" ? "P" : "PT") + Number(v) + unit;
    }
    return v;
  }

  // a broken rule in the page's language (wording.ts rulePhrases): the phrase of the rule as
  // written, with the day of a "today" bound read from the problem; the API's problem otherwise
  const rulePhrase = (e) => {
    const phrase = Object.prototype.hasOwnProperty.call(WORDS.rules, e.rule) ? WORDS.rules[e.rule] : null;
    if (phrase === null) return String(e.problem);
    if (!phrase.includes("\u0001")) return phrase;
    const m = /\d{4}-\d{2}-\d{2}/.exec(String(e.problem));
    if (!m) return String(e.problem);
    const day = WORDS.lang === "en" ? m[0] : new Intl.DateTimeFormat(WORDS.lang, WORDS.dayOptions).format(new Date(m[0] + "T00:00:00Z"));
    return phrase.split("\u0001").join(day);
  };
  const clearErrors = () => {
    for (const p of form.querySelectorAll(".error")) { p.hidden = true; p.textContent = ""; }
    for (const c of form.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
  };
  const showFieldErrors = (errors) => {
    let first = null;
    for (const e of errors || []) {
      const name = String(e.name || "").split(/[.\[]/)[0];
      const line = name && document.getElementById("err-" + name);
      if (!line) continue;
      line.hidden = false;
      const block = line.closest("[data-param]");
      const label = block.getAttribute("data-label") || name;
      const required = /^is required/.test(String(e.problem));
      // a broken constraint (v0.5) is said with its phrase: "“Revenue” must be at least 0."
      const sentence = e.rule
        ? WORDS.rule.replace("{label}", () => label).replace("{problem}", () => rulePhrase(e))
        : (required ? WORDS.required : WORDS.invalid)[label] || (required ? WORDS.requiredAround : WORDS.invalidAround).join(label);
      if (!line.textContent.includes(sentence)) line.textContent = (line.textContent ? line.textContent + " " : "") + sentence;
      for (const c of block.querySelectorAll("input, textarea, select")) c.setAttribute("aria-invalid", "true");
      first = first || block.querySelector("input, textarea, select");
    }
    return first;
  };

  async function attempt(body) {
    submit.disabled = true;
    form.setAttribute("aria-busy", "true");
    say(WORDS.sending, "busy");
    remember({ key, body });
    let r;
    try {
      r = await send(body, key);
    } catch {
      say(WORDS.dropped, "error");
      submit.disabled = false;
      form.removeAttribute("aria-busy");
      pending = body;
      return;
    }
    form.removeAttribute("aria-busy");
    if (r.status === 200 || r.status === 202) {
      pending = null;
      say(r.status === 200 ? WORDS.done : WORDS.accepted, "done");
      for (const c of form.elements) c.disabled = true;
      if (r.status === 200 && r.problem) showReceipt(r.problem.receipt);
      remember({ key, body, done: true });
      return;
    }
    const p = r.problem || {};
    const code = p.code === "link-dead" && p.reason === "expired" ? "link-dead-expired" : p.code === "link-retired" && p.reason === "forwarded" ? "link-retired-forwarded" : p.code;
    const own = (o, k) => o !== null && typeof o === "object" && Object.prototype.hasOwnProperty.call(o, k);
    const requires = code === "requires-failed"
      ? (own(p.wordings, WORDS.lang) && typeof p.wordings[WORDS.lang] === "string" ? p.wordings[WORDS.lang] : p.detail === WORDS.requiresGenericDetail ? WORDS.requiresGeneric : null)
      : null;
    const detail = requires || (own(WORDS.byCode, code) ? WORDS.byCode[code] : null) || p.detail || p.title || WORDS.refused.join(String(r.status));
    if (r.status >= 500 || r.status === 429) {
      pending = body;
      say(WORDS.tryAgain.join(detail), "error");
      submit.disabled = false;
      return;
    }
    pending = null;
    remember(null);
    key = crypto.randomUUID();
    if (r.status === 422 && Array.isArray(p.errors)) {
      const first = showFieldErrors(p.errors);
      // above the fields (issue 38 defect 4), not under the button: the form's first line
      const summary = document.getElementById("check-fields");
      if (summary) {
        summary.textContent = WORDS.checkFields;
        summary.hidden = false;
        say("", "");
      } else {
        say(WORDS.checkFields, "error");
      }
      if (first) first.focus();
    } else {
      say(detail, "error");
    }
    submit.disabled = r.status === 410;
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (submit.disabled) return;
    clearErrors();
    if (pending) return attempt(pending);
    const body = {};
    for (const block of form.querySelectorAll("[data-param]")) {
      const v = read(block);
      if (v !== undefined) body[block.getAttribute("data-param")] = v;
    }
    attempt(body);
  });
})();
`;
