/**
 * The user docs link only to what a reader has (issue 30 item 11): every relative link in
 * README.md and docs/*.md — Markdown `[text](target)`, reference definitions `[x]: target`, and
 * HTML `href`/`src` — names a file inside the repository that exists, and its `#anchor`, if any,
 * names a heading (GitHub's slugs) or an explicit `id`/`name` of that file. Code (fenced blocks
 * and inline code) is not read. Links with a scheme (`https:`, `mailto:`) are not followed.
 * And no user doc speaks of internal issue numbers ("(issue 18)"), which mean nothing to a reader.
 */
import test from "ava";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { ROOT } from "../helpers/server.js";

export const USER_DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

/** The text without fenced code blocks and inline code (replaced by blanks, so lines keep their numbers). */
export function prose(md: string): string {
  return md
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, " "))
    .replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, (code) => code.replace(/[^\n]/g, " "));
}

/** GitHub's anchor of a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/<[^>]+>/g, "") // tags
    .replace(/`/g, "");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

/** Every anchor a file offers: its headings' slugs (repeats numbered -1, -2 …) and explicit ids. */
export function anchorsOf(md: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  const text = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  for (const m of text.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** The relative link targets of a Markdown file, with their line numbers. */
export function linksOf(md: string): { target: string; line: number }[] {
  const text = prose(md);
  const out: { target: string; line: number }[] = [];
  const lineAt = (i: number) => text.slice(0, i).split("\n").length;
  const patterns = [
    /!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, // [text](target "title")
    /^[ \t]*\[[^\]]+\]:[ \t]*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm, // [ref]: target
    /\b(?:href|src)="([^"]+)"/g, // HTML
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push({ target: m[1]!, line: lineAt(m.index!) });
  return out.filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target)).sort((a, b) => a.line - b.line);
}

/** What is wrong with each relative link of `file` (its text: `md`, else read); empty when every link resolves. */
export function brokenLinks(file: string, md = readFileSync(join(ROOT, file), "utf8")): string[] {
  const problems: string[] = [];
  for (const { target, line } of linksOf(md)) {
    const [pathPart, anchor] = (() => {
      const i = target.indexOf("#");
      return i < 0 ? [target, null] : [target.slice(0, i), decodeURIComponent(target.slice(i + 1))];
    })();
    const abs = pathPart ? resolve(ROOT, dirname(file), decodeURIComponent(pathPart.split("?")[0]!)) : join(ROOT, file);
    const rel = relative(ROOT, abs);
    const where = `${file}:${line} → ${target}`;
    if (rel === ".." || rel.startsWith(`..${sep}`)) {
      problems.push(`${where}: outside the repository`);
      continue;
    }
    if (rel.split(sep).includes("node_modules") || !existsSync(abs)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor !== null && anchor !== "" && statSync(abs).isFile() && abs.endsWith(".md")) {
      if (!anchorsOf(readFileSync(abs, "utf8")).has(anchor)) problems.push(`${where}: no heading or id "${anchor}" in ${rel}`);
    }
  }
  return problems;
}

test("the checker: slugs as GitHub makes them, code is not read, a missing file or heading and a path outside are found", (t) => {
  t.is(slug("Delivering links through other channels"), "delivering-links-through-other-channels");
  t.is(slug("`send email`: the outbox (v0.3)"), "send-email-the-outbox-v03");
  t.is(slug("10. Timers: `after` and `every`"), "10-timers-after-and-every");
  t.deepEqual([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n<a id=\"x\"></a>")], ["a", "a-1", "x"]);
  t.deepEqual(linksOf("see [a](a.md#b) and `[c](c.md)`\n```\n[d](d.md)\n```\n[e]: e.md\n<img src=\"i.png\"> [w](https://x.test)"), [
    { target: "a.md#b", line: 1 },
    { target: "i.png", line: 6 },
    { target: "e.md", line: 5 },
  ].sort((a, b) => a.line - b.line));
  const heading = [...anchorsOf(readFileSync(join(ROOT, "docs", "configuration.md"), "utf8"))][1]!;
  t.deepEqual(
    brokenLinks("docs/x.md", `[ok](configuration.md#${heading}) [out](../../outside.md) [gone](nope.md) [anchor](configuration.md#no-such-heading) [root](../README.md)`),
    [
      "docs/x.md:1 → ../../outside.md: outside the repository",
      "docs/x.md:1 → nope.md: no such file",
      'docs/x.md:1 → configuration.md#no-such-heading: no heading or id "no-such-heading" in docs/configuration.md',
    ],
  );
  t.deepEqual(unknownDocNames("docs/x.md", "see `../shared/design/language.md` and interfaces.md; not docs/scaling.md or README.md or `language.md`"), [
    "docs/x.md:1: ../shared/design/language.md",
    "docs/x.md:1: interfaces.md",
  ]);
});

test("every relative link in README.md and docs/*.md resolves inside the repository, and its #anchor to a heading", (t) => {
  t.true(USER_DOCS.length >= 10);
  let links = 0;
  for (const f of USER_DOCS) links += linksOf(readFileSync(join(ROOT, f), "utf8")).length;
  t.true(links > 50, `relative links read: ${links}`);
  t.deepEqual(USER_DOCS.flatMap((f) => brokenLinks(f)), []);
});

/**
 * Every Markdown file a doc names in its text or inline code (`docs/scaling.md`, `README.md`,
 * `../shared/design/language.md`) that the repository does not have — relative to the doc, the
 * repository's root or docs/. A reader cannot follow a name that points elsewhere.
 */
export function unknownDocNames(file: string, text = readFileSync(join(ROOT, file), "utf8")): string[] {
  const md = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (b) => b.replace(/[^\n]/g, " "));
  const out: string[] = [];
  for (const m of md.matchAll(/(?<![\w./-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w.-]+\.md)\b/g)) {
    const name = m[1]!;
    const line = md.slice(0, m.index).split("\n").length;
    const inside = (abs: string) => !relative(ROOT, abs).startsWith("..");
    const candidates = [resolve(ROOT, dirname(file), name), resolve(ROOT, name), resolve(ROOT, "docs", name)];
    if (!candidates.some((c) => inside(c) && existsSync(c))) out.push(`${file}:${line}: ${name}`);
  }
  return out;
}

test("every Markdown file a user doc names is in the repository", (t) => {
  t.deepEqual(USER_DOCS.flatMap((f) => unknownDocNames(f)), []);
});

test("no user doc mentions an internal issue number", (t) => {
  const found: string[] = [];
  for (const f of USER_DOCS) {
    const lines = readFileSync(join(ROOT, f), "utf8").split("\n");
    lines.forEach((l, i) => {
      if (/\bissues? #?\d+/i.test(l)) found.push(`${f}:${i + 1}: ${l.trim().slice(0, 120)}`);
    });
  }
  t.deepEqual(found, []);
});
