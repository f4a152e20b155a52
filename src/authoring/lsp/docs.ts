/**
 * What docs/diagnostics.md says of each code: the link a diagnostic carries (its
 * `codeDescription`) and the description hover shows. Read once from the package's own docs/
 * (shipped in the package, see package.json "files"); a code the page lacks gets the link alone.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { packageRoot } from "../../package.js";

let descriptions: Map<string, string> | null = null;
const page = () => join(packageRoot(), "docs", "diagnostics.md");

/** `file:///…/docs/diagnostics.md#flow103`: the entry of `code` (headings anchor in lower case). */
export function diagnosticHref(code: string): string {
  return `${pathToFileURL(page()).href}#${code.toLowerCase()}`;
}

/** The first paragraph of `code`'s entry (`**Name** — error. …`), or null. */
export function diagnosticDescription(code: string): string | null {
  if (descriptions === null) {
    descriptions = new Map();
    const text = existsSync(page()) ? readFileSync(page(), "utf8") : "";
    for (const m of text.matchAll(/^### (FLOW\d{3})\n([\s\S]*?)(?=\n```|\n#|\n\n)/gm)) descriptions.set(m[1], m[2].replace(/\n/g, " ").trim());
  }
  return descriptions.get(code) ?? null;
}
