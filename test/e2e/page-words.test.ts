/**
 * Pages in the reader's language, over HTTP (interfaces.md "Pages in the responder's language";
 * language.md "Languages of the responder"), against one real `slotflow serve`: what used to stay
 * English on the task page, the inbox and the responder page now follows the page's language —
 *   - a broken rule (`@min`, `@minLength`, `@max(today)`) under its field, from the catalogs;
 *   - `Requires … else "…", de: "…"`: the page shows the variant for its language (the problem's
 *     `wordings`), the JSON API's `detail` stays the default wording;
 *   - the task page's and the inbox's `Title`/`Intro` variants;
 *   - the task page's refusals (403 not-a-candidate, CSRF) and the development banner's words;
 *   - the responder page's script gets the rule phrases and the refusal sentences in its language.
 * The API's `errors`, `expects` and `detail` stay English (machine-readable).
 */
import test from "ava";
import { postLink, principalJwt, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

const FLOW = `workflow PageWords(who: string, limit: int)

event Offer(
  amount: int @label("Amount", de: "Betrag") @min(0),
  code: string @label("Code", de: "Kennung") @minLength(1),
  day: date @label("Day", de: "Tag") @max(today),
)

initial state Waiting {
  subscribe Offer(amount, code, day) as offer {
    Candidates: role("buyer")
    Requires: amount <= limit else "At most " + limit + " for " + who + ".", de: "Höchstens " + limit + " für " + who + "."
    Title: "Offer for " + who, de: "Angebot für " + who
    Intro: "Please make an offer.", de: "Bitte machen Sie ein Angebot."
  }
  subscribe Offer(amount, code, day) as linked {
    Requires: amount <= limit else "At most " + limit + " for " + who + ".", de: "Höchstens " + limit + " für " + who + "."
    Title: "Linked offer for " + who, de: "Verlinktes Angebot für " + who
    Forwardable: true
  }
  enter { send email to who { subject: "words " + who, body: linked.CallbackUrl() } }
  on offer(amount, code, day) -> Done
  on linked(amount, code, day) -> Done
}

terminal state Done
`;

test.before(async () => {
  cluster = await startCluster("pagewords");
  base = cluster.baseUrl;
  const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: FLOW });
  if (res.status !== 201 && res.status !== 200) throw new Error(`deploy answered ${res.status}: ${res.text}`);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function begin() {
  const who = `${uniqueTitle("words")}@example.test`;
  const runId = await startRun(base, "PageWords", { who, limit: 10 });
  return { runId, who, task: `/inbox/tasks/${runId}/offer` };
}

/** One request that does not follow redirects; `form` is sent as a web form. */
async function call(method: string, path: string, opts: { jwt?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { accept: "text/html", ...opts.headers };
  if (opts.jwt) headers.authorization = `Bearer ${opts.jwt}`;
  let body: string | undefined;
  if (opts.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(opts.form).toString();
  }
  const res = await fetch(new URL(path, base), { method, headers, body, redirect: "manual" });
  return { status: res.status, text: await res.text() };
}

const today = () => new Date().toISOString().slice(0, 10);
const germanDay = (iso: string) => new Intl.DateTimeFormat("de", { dateStyle: "long", timeZone: "UTC" }).format(new Date(`${iso}T00:00:00Z`));

test("task page in German: Title/Intro variants, broken rules from the catalog, the Requires variant; English stays English", async (t) => {
  const run = await begin();
  const buyer = await principalJwt("bea", ["buyer"]);
  const de = { "accept-language": "de-DE,de;q=0.9" };

  const page = await call("GET", run.task, { jwt: buyer, headers: de });
  t.is(page.status, 200, page.text);
  t.regex(page.text, /<html lang="de"/);
  t.regex(page.text, new RegExp(`<h1>Angebot für ${run.who.replace(/[.]/g, "\\.")}</h1>`));
  t.regex(page.text, /<p class="intro">Bitte machen Sie ein Angebot\.<\/p>/);

  // broken rules, each under its field in German; the day of `today` as German writes it
  const bad = await call("POST", run.task, { jwt: buyer, headers: de, form: { amount: "-5", code: "", day: "2099-01-01", csrf: "" } });
  t.is(bad.status, 422, bad.text);
  t.regex(bad.text, /<p class="error" id="err-amount">„Betrag“: muss mindestens 0 sein\.<\/p>/);
  t.regex(bad.text, /<p class="error" id="err-code">„Kennung“: darf nicht leer sein\.<\/p>/);
  t.true(bad.text.includes(`<p class="error" id="err-day">„Tag“: darf nicht in der Zukunft liegen (nach dem ${germanDay(today())}).</p>`), bad.text);
  t.regex(bad.text, /Bitte prüfen Sie die unten markierten Felder\./);
  t.notRegex(bad.text, /must be|must not/);

  // Requires: the German variant on the German page
  const over = await call("POST", run.task, { jwt: buyer, headers: de, form: { amount: "50", code: "X", day: "2020-01-01", csrf: "" } });
  t.is(over.status, 409, over.text);
  t.true(over.text.includes(`Höchstens 10 für ${run.who}.`), over.text);

  // the same in English: the default wording and the English phrases
  const en = { "accept-language": "en" };
  const badEn = await call("POST", run.task, { jwt: buyer, headers: en, form: { amount: "-5", code: "", day: "2099-01-01", csrf: "" } });
  t.regex(badEn.text, /<p class="error" id="err-amount">“Amount” must be at least 0\.<\/p>/);
  t.true(badEn.text.includes(`“Day” must not be in the future (after ${today()}).`), badEn.text);
  const overEn = await call("POST", run.task, { jwt: buyer, headers: en, form: { amount: "50", code: "X", day: "2020-01-01", csrf: "" } });
  t.true(overEn.text.includes(`At most 10 for ${run.who}.`), overEn.text);
  // French: no French variant, so the author's default wording; slotflow's words in French
  const overFr = await call("POST", `${run.task}?lang=fr`, { jwt: buyer, form: { amount: "50", code: "X", day: "2020-01-01", csrf: "" } });
  t.true(overFr.text.includes(`At most 10 for ${run.who}.`), overFr.text);
  const badFr = await call("POST", `${run.task}?lang=fr`, { jwt: buyer, form: { amount: "-5", code: "X", day: "2020-01-01", csrf: "" } });
  t.regex(badFr.text, /« Amount » : doit valoir au moins 0\./);

  // the raise API keeps its English detail and machine-readable errors, and carries the variants
  const raised = await request(base, "POST", `/api/runs/${run.runId}/slots/offer/events`, { token: buyer, json: { amount: 50, code: "X", day: "2020-01-01" } });
  t.is(raised.status, 409, raised.text);
  t.is(raised.body.detail, `At most 10 for ${run.who}.`);
  t.deepEqual(raised.body.wordings, { de: `Höchstens 10 für ${run.who}.` });
  const invalid = await request(base, "POST", `/api/runs/${run.runId}/slots/offer/events`, { token: buyer, json: { amount: -5, code: "X", day: "2020-01-01" } });
  t.deepEqual(invalid.body.errors, [{ name: "amount", problem: "must be at least 0", rule: "@min(0)" }]);
});

test("task page refusals and the inbox in German: 403 not-a-candidate (with and without roles, and in Japanese), the inbox's Title variant and times", async (t) => {
  const run = await begin();
  const clerk = await principalJwt("carl", ["clerk"]);
  const refused = await call("GET", `${run.task}?lang=de`, { jwt: clerk });
  t.is(refused.status, 403, refused.text);
  t.regex(refused.text, /Wer diese Aufgabe beantworten darf: alle mit der Rolle „buyer“\. Sie sind angemeldet als carl@example\.test \(Ihre Rollen: clerk\)\./);
  t.notRegex(refused.text, /may be answered by|you are signed in/);
  const none = await principalJwt("nora", []);
  t.regex((await call("GET", `${run.task}?lang=de`, { jwt: none })).text, /\(Sie haben keine Rolle\)/);
  t.regex((await call("GET", `${run.task}?lang=ja`, { jwt: clerk })).text, /あなたは carl@example\.test \(ロール: clerk\) としてサインインしています。/);

  const buyer = await principalJwt("bea", ["buyer"]);
  const inbox = await call("GET", "/inbox?lang=de", { jwt: buyer });
  t.is(inbox.status, 200, inbox.text);
  t.true(inbox.text.includes(`>Angebot für ${run.who}</a></h2>`), inbox.text);
  t.regex(inbox.text, /\(vor \d+ Sekunden\)|\(vor \d+ Minuten?\)|\(vor 1 Minute\)/);
  const inboxEn = await call("GET", "/inbox?lang=en", { jwt: buyer });
  t.true(inboxEn.text.includes(`>Offer for ${run.who}</a></h2>`));
  // the API's inbox keeps the default Title
  const api = await request(base, "GET", "/api/inbox", { token: buyer });
  t.true(api.body.tasks.some((task: { title: string }) => task.title === `Offer for ${run.who}`), api.text);
});

test("the link: the JSON API keeps the default Requires wording and adds `wordings`; the responder page's script gets its language's phrases", async (t) => {
  const run = await begin();
  const link = linkIn(await waitForEmail(() => cluster.output(), `words ${run.who}`));
  const over = await postLink(link, { amount: 50, code: "X", day: "2020-01-01" });
  t.is(over.status, 409, over.text);
  t.is(over.body.code, "requires-failed");
  t.is(over.body.detail, `At most 10 for ${run.who}.`);
  t.deepEqual(over.body.wordings, { de: `Höchstens 10 für ${run.who}.` });
  const bad = await postLink(link, { amount: -5, code: "", day: "2020-01-01" });
  t.is(bad.status, 422);
  t.deepEqual(bad.body.errors, [
    { name: "amount", problem: "must be at least 0", rule: "@min(0)" },
    { name: "code", problem: "must not be empty", rule: "@minLength(1)" },
  ]);

  const page = await fetch(`${link}?lang=de`, { headers: { accept: "text/html" } });
  const html = await page.text();
  t.is(page.status, 200, html);
  const words = JSON.parse(/const WORDS = (\{.*?\});\n/s.exec(html)![1]!.replaceAll("\\u003c", "<"));
  t.is(words.lang, "de");
  t.deepEqual(words.rules, { "@min(0)": "muss mindestens 0 sein", "@minLength(1)": "darf nicht leer sein", "@max(today)": "darf nicht in der Zukunft liegen (nach dem \u0001)" });
  t.is(words.byCode["rate-limited"], "In kurzer Zeit wurden zu viele Antworten gesendet.");
  t.is(words.byCode["authorize-denied"], "Diese Antwort ist nicht erlaubt: Eine Regel des Workflows lehnt sie ab.");
  t.regex(words.requiresGeneric, /^Diese Antwort kann jetzt nicht angenommen werden/);
  t.is(words.dayOptions.dateStyle, "long");
});

test("the development mail print of a forward mail is in the forwarder's language: the Title variant and slotflow's words in German", async (t) => {
  const run = await begin();
  const link = linkIn(await waitForEmail(() => cluster.output(), `words ${run.who}`));
  const colleague = `${uniqueTitle("kollegin")}@example.test`;
  const forwarded = await postLink(`${link}/forward`, { email: colleague }, { headers: { "accept-language": "de-CH, en;q=0.5" } });
  t.is(forwarded.status, 200, forwarded.text);
  const mail = await waitForEmail(() => cluster.output(), `Verlinktes Angebot für ${run.who}`);
  t.is(mail.to, colleague);
  t.true(mail.body.includes(`${run.who} hat diese Anfrage an Sie weitergegeben:`), mail.body);
  t.regex(mail.body, /Hier antworten: http/);
  t.notRegex(mail.body, /passed this request on|Answer it here/);
});
