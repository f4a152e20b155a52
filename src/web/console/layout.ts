/**
 * The console's document shell: landmarks (skip link, header with navigation, main), one inline
 * style and one inline script under the response's CSP nonce, nothing loaded from anywhere else.
 * Readable from 360 px phones to desktops; colours meet WCAG AA contrast on the light scheme.
 *
 * The script only improves what already works without it: countdowns (`time.countdown`) tick each
 * second, and on a runs list `j`/`k` move the focus between runs (`Enter` opens one) and `/` jumps
 * to the filters. Every action is a plain form (POST → 303), every filter a GET form.
 */
import { html, raw, type Html } from "../page/html.js";
import type { ConsoleUser } from "./access.js";

const STYLE = `
:root { color-scheme: light; --fg: #1b1b1f; --bg: #ffffff; --muted: #4a4a55; --line: #8a8a99; --soft: #f1f1f5; --accent: #0b57d0; --bad: #a8201a; --good: #146c2e; --warn: #7a4d00; }
* { box-sizing: border-box; }
body { margin: 0; font: 0.95rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: 0.5rem; }
.skip:focus { left: 0.5rem; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1.25rem; padding: 0.6rem 1rem; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; }
header.top nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0; padding: 0; }
header.top nav a { display: inline-block; padding: 0.35rem 0; }
header.top .who { margin-left: auto; color: var(--muted); font-size: 0.875rem; }
main { max-width: 80rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; line-height: 1.25; margin: 0.25rem 0 0.75rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 0.5rem; }
h3 { font-size: 1rem; margin: 0 0 0.35rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
code { overflow-wrap: anywhere; }
figure { margin: 0; }
.mono, code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; }
pre { background: var(--soft); padding: 0.75rem; overflow-x: auto; border-radius: 0.375rem; margin: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.45rem 0.5rem; border-bottom: 1px solid #d0d0da; }
th { font-weight: 600; white-space: nowrap; }
tr.run:focus-within { background: var(--soft); }
.badge { display: inline-block; padding: 0 0.45rem; border-radius: 999px; border: 1px solid var(--line); font-size: 0.8rem; white-space: nowrap; }
.badge.running, .badge.open, .badge.live { border-color: var(--good); color: var(--good); }
.badge.cancelled, .badge.dead, .badge.expired { border-color: var(--bad); color: var(--bad); }
.badge.waiting, .badge.retired, .badge.burned { border-color: var(--warn); color: var(--warn); }
.badge.sent { border-color: var(--good); color: var(--good); }
.badge.failed, .badge.withdrawn { border-color: var(--bad); color: var(--bad); }
.badge.pending { border-color: var(--warn); color: var(--warn); }
ul.plain { list-style: none; padding: 0; margin: 0; }
.waits li { margin: 0 0 0.2rem; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 0.75rem; align-items: end; margin: 0 0 0.75rem; }
form.filters .f { display: flex; flex-direction: column; min-width: 8.5rem; flex: 1 1 8.5rem; }
label { font-weight: 600; font-size: 0.875rem; }
input, select, textarea { font: inherit; color: inherit; background: var(--bg); min-height: 2.5rem; padding: 0.35rem 0.5rem; border: 1px solid var(--line); border-radius: 0.375rem; width: 100%; }
textarea { min-height: 4rem; }
button, .button { font: inherit; min-height: 2.5rem; padding: 0.35rem 1rem; border-radius: 0.375rem; border: 1px solid var(--accent); background: var(--accent); color: #ffffff; cursor: pointer; text-decoration: none; display: inline-block; }
button.danger { background: var(--bad); border-color: var(--bad); }
.counts { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; margin: 0 0 0.75rem; padding: 0; list-style: none; }
.pager { display: flex; gap: 1rem; margin: 0.75rem 0; }
.panel { border: 2px solid var(--accent); border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 0 0 1rem; }
.slot { border-top: 1px solid #d0d0da; padding: 0.75rem 0; }
.slot:first-of-type { border-top: 0; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.2rem 0.75rem; margin: 0.25rem 0 0.5rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.action { margin: 0.5rem 0 0; max-width: 36rem; }
.action .row { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: end; }
.action .row > div { flex: 1 1 14rem; }
.notice { border-left: 4px solid var(--good); padding: 0.35rem 0.75rem; background: #eef7f0; }
.notice.error { border-left-color: var(--bad); background: #fbeeed; }
.graph { overflow-x: auto; border: 1px solid #d0d0da; border-radius: 0.5rem; padding: 0.5rem; }
.graph svg { display: block; max-width: 100%; height: auto; }
.graph .node rect { fill: #ffffff; stroke: #5c5c6b; stroke-width: 1.5; }
.graph .node.visited rect { fill: #e8f0fe; }
.graph .node.current rect { fill: #0b57d0; stroke: #062e6f; stroke-width: 3; }
.graph .node text { fill: #1b1b1f; font: 13px system-ui, sans-serif; }
.graph .node.current text { fill: #ffffff; font-weight: 700; }
.graph .edge path { fill: none; stroke: #6b6b7a; stroke-width: 1.25; }
.graph .edge.taken path { stroke: #0b57d0; stroke-width: 2.5; }
.graph .edge text { fill: #3a3a45; font: 11px system-ui, sans-serif; }
.graph .arrow { fill: #6b6b7a; }
ol.timeline { list-style: none; padding: 0; margin: 0; }
ol.timeline li { display: grid; grid-template-columns: 6.5rem minmax(0, 1fr); gap: 0.5rem; padding: 0.25rem 0; border-bottom: 1px solid #e3e3ea; }
ol.timeline .at { font-variant-numeric: tabular-nums; color: var(--muted); }
.src .kw { color: #8a1f9e; font-weight: 600; }
.src .str { color: #0a6b2d; }
.src .com { color: #5a5a66; font-style: italic; }
.src .num { color: #9a3b00; }
.src .esc { color: #b3261e; font-weight: 600; }
.src .name { color: #0b4f8a; font-weight: 600; }
.src .type { color: #1d5f6b; }
.src .fn { color: #6b4a00; }
.src .attr { color: #8b1d4f; }
.src .prop { color: #1f3f8f; }
.diff .add { background: #e3f6e8; color: #0c4a20; display: block; }
.diff .del { background: #fbe4e2; color: #7a1610; display: block; }
.diff .hunk { color: #3d3d99; display: block; }
.keys { font-size: 0.85rem; }
kbd { border: 1px solid var(--line); border-radius: 0.25rem; padding: 0 0.3rem; font-size: 0.8rem; }
@media (max-width: 40rem) { th.opt, td.opt { display: none; } ol.timeline li { grid-template-columns: 1fr; gap: 0; } }
/* Narrow screens (issue 30 item 5): a table.stack shows each row as a card, one cell per line with
   its column's name (data-label) before it; the header row stays for screen readers only. */
@media (max-width: 40rem) {
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack caption { display: block; text-align: left; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  table.stack tr { border-bottom: 1px solid #d0d0da; padding: 0.4rem 0; }
  table.stack td { border: 0; padding: 0.1rem 0; overflow-wrap: anywhere; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  .badge { white-space: normal; }
}
`;

const SCRIPT = `
(function () {
  function span(ms) {
    var s = Math.floor(Math.abs(ms) / 1000), d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), x = s % 60;
    return d ? d + " d " + h + " h" : h ? h + " h " + m + " min" : m ? m + " min " + x + " s" : x + " s";
  }
  function tick() {
    var els = document.querySelectorAll("time.countdown");
    for (var i = 0; i < els.length; i++) {
      var ms = Date.parse(els[i].getAttribute("datetime")) - Date.now();
      els[i].textContent = ms >= 0 ? "in " + span(ms) : "passed " + span(ms) + " ago";
    }
  }
  tick();
  setInterval(tick, 1000);
  var links = Array.prototype.slice.call(document.querySelectorAll("a.run-link"));
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.altKey || e.ctrlKey || e.metaKey || (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (e.key === "/") { var f = document.getElementById("filters"); if (f) { e.preventDefault(); f.querySelector("select, input").focus(); } return; }
    if (!links.length || (e.key !== "j" && e.key !== "k")) return;
    var at = links.indexOf(document.activeElement);
    var next = e.key === "j" ? Math.min(links.length - 1, at + 1) : Math.max(0, at < 0 ? 0 : at - 1);
    links[next].focus();
    e.preventDefault();
  });
})();
`;

/** A whole console page. `title` names the page (the document title adds "slotflow console"). */
export function consolePage(nonce: string, user: ConsoleUser, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title} · slotflow console</title>
<style nonce="${nonce}">${raw(STYLE)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<span class="brand">slotflow console</span>
<nav aria-label="Console"><ul>
<li><a href="/console/runs">Runs</a></li>
<li><a href="/console/runs?status=running">Running</a></li>
${user.role === "operator" ? html`<li><a href="/admin/queues">Queues (Bull Board)</a></li>` : null}
</ul></nav>
<span class="who">Signed in${user.name ? html` as ${user.name}` : null} · ${user.role === "operator" ? "operator" : "viewer (read-only)"}</span>
</header>
<main id="main">
${body}
</main>
<script nonce="${nonce}">${raw(SCRIPT)}</script>
</body>
</html>
`.text;
}

/** A small page for 401/403/404 answers. */
export function messagePage(nonce: string, title: string, message: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title} · slotflow console</title>
<style nonce="${nonce}">${raw(STYLE)}</style>
</head>
<body>
<main id="main">
<h1>${title}</h1>
<p>${message}</p>
<p><a href="/console/runs">Back to the runs</a></p>
</main>
</body>
</html>
`.text;
}
