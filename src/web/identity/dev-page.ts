/**
 * The development sign-in page (v0.4 "People inside the company": without an issuer and outside
 * production, `GET /auth/login` is "a development sign-in page (id, email, roles)"; and a time zone,
 * as an issuer's `zoneinfo` claim gives it, for the times on the insiders' pages). Server-rendered,
 * no script; one inline style under the response's CSP nonce; labelled fields; works at 360 px.
 */
import { isRightToLeft, t } from "../../i18n/index.js";
import { html, raw } from "../page/html.js";
import { plainReader, type Reader } from "../page/reader.js";
import { DEVELOPMENT_BANNER_STYLE } from "./signed-in.js";

const STYLE = `
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #ffffff; --muted: #4a4a55; --line: #8a8a99; --accent: #0b57d0; --bad: #b3261e; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececf1; --bg: #16161a; --muted: #c4c4cf; --accent: #a8c7fa; --bad: #ffb4ab; } }
* { box-sizing: border-box; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 32rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 0.75rem; }
label { display: block; font-weight: 600; margin: 1rem 0 0.25rem; }
.help { color: var(--muted); font-size: 0.9rem; margin: 0 0 0.4rem; }
input { font: inherit; color: inherit; background: transparent; width: 100%; min-height: 2.75rem; padding: 0.5rem 0.6rem; border: 1px solid var(--line); border-radius: 0.375rem; }
button { font: inherit; min-height: 2.75rem; margin-top: 1.25rem; padding: 0.5rem 1.25rem; border-radius: 0.375rem; border: 1px solid var(--accent); background: var(--accent); color: var(--bg); font-weight: 600; cursor: pointer; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.error { color: var(--bad); font-weight: 600; }
${DEVELOPMENT_BANNER_STYLE}
`;

/** The form's values when it is shown again with an error. */
export interface DevForm {
  id: string;
  email: string;
  roles: string;
  /** An IANA time zone name, or empty (UTC). */
  zone: string;
}

/** The development sign-in page: `csrf` goes in a hidden field, `returnTo` too; `error` is shown above the form. */
export function devSignInPage(nonce: string, csrf: string, returnTo: string, values: DevForm = { id: "", email: "", roles: "", zone: "" }, error: string | null = null, reader: Reader = plainReader()): string {
  const lang = reader.lang;
  return html`<!doctype html>
<html lang="${lang}" dir="${isRightToLeft(lang) ? "rtl" : "ltr"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${t(lang, "signin.devTitle")} — slotflow</title>
<style nonce="${nonce}">${raw(STYLE)}</style>
</head>
<body>
<main>
<div class="dev-banner" role="note">${t(lang, "signin.devBanner")}</div>
${reader.brand.name ? html`<p class="brand" id="brand">${reader.brand.name}</p>` : null}
<h1>${t(lang, "signin.devTitle")}</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : null}
<form method="post" action="/auth/login">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="returnTo" value="${returnTo}">
<label for="id">${t(lang, "signin.userId")}</label>
<p class="help" id="id-help">${t(lang, "signin.userIdHelp")}</p>
<input id="id" name="id" type="text" required maxlength="200" autocomplete="username" aria-describedby="id-help" value="${values.id}">
<label for="email">${t(lang, "signin.email")}</label>
<input id="email" name="email" type="email" maxlength="320" autocomplete="email" value="${values.email}">
<label for="roles">${t(lang, "signin.roles")}</label>
<p class="help" id="roles-help">${t(lang, "signin.rolesHelp")}</p>
<input id="roles" name="roles" type="text" maxlength="2000" aria-describedby="roles-help" value="${values.roles}">
<label for="zone">${t(lang, "signin.zone")}</label>
<p class="help" id="zone-help">${t(lang, "signin.zoneHelp")}</p>
<input id="zone" name="zone" type="text" maxlength="64" autocomplete="off" aria-describedby="zone-help" value="${values.zone}">
<button type="submit">${t(lang, "signin.submit")}</button>
</form>
</main>
</body>
</html>
`.text;
}
