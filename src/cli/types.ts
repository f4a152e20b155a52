/**
 * `slotflow types` and `slotflow check --types` (issue 41 item 1; interfaces.md "The TypeScript
 * SDK"; docs/sdk.md). The declarations themselves are written by src/sdk/types.ts.
 *
 * - From `.flow` files: each is compiled (src/lang); a file that does not compile prints its
 *   diagnostics as `slotflow check` does and nothing is written (exit 1).
 * - From a server (`--url`, admin token `--token` or SLOTFLOW_ADMIN_TOKEN): the current version of
 *   every deployed workflow, as `GET /api/workflows` describes it (src/web/admin.ts).
 * - Both at once: the files' workflows and the server's; a name in both is an error.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { compile, formatDiagnostic } from "../lang/compile.js";
import { assertSignature, comparedPart, declarations, signatureOf, type WorkflowSignature } from "../sdk/types.js";
import { api } from "./client.js";
import { redactUrl, StartupError } from "./failure.js";

type Out = (line: string) => void;

/** The signatures of `files` (null when one cannot be read or has an error: then each is printed to `err`). */
export function signaturesOfFiles(files: string[], err: Out): WorkflowSignature[] | null {
  const out: WorkflowSignature[] = [];
  let failed = false;
  for (const file of files) {
    let source: string;
    try {
      source = readFileSync(file, "utf8");
    } catch (e) {
      err(`${file}: error: cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      failed = true;
      continue;
    }
    const result = compile(source, file);
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    for (const d of errors) for (const line of formatDiagnostic(d, source, file).split("\n")) err(line);
    if (result.workflow === null) failed = true;
    else out.push(signatureOf(result.workflow));
  }
  return failed ? null : out;
}

/** The signatures of every workflow deployed on the server at `url` (`GET /api/workflows`, admin token). */
export async function signaturesOfServer(url: string, token: string): Promise<WorkflowSignature[]> {
  const answer = await api(url, "GET", "/api/workflows", { token });
  if (answer.status !== 200) {
    const body = answer.body as { code?: string; detail?: string } | string;
    const why = typeof body === "object" && body !== null ? `${body.code ?? ""}: ${body.detail ?? ""}` : String(body).slice(0, 200);
    throw new StartupError(`the server at ${redactUrl(url)} answered ${answer.status} to GET /api/workflows (${why})`);
  }
  const list = (answer.body as { workflows?: unknown }).workflows;
  if (!Array.isArray(list)) throw new StartupError(`the server at ${redactUrl(url)} did not answer a list of workflows (is it slotflow 0.5 or later?)`);
  return list.map((w: { signature?: unknown }, i) => assertSignature(w?.signature, `GET /api/workflows, workflow ${i + 1}`));
}

/** Where the declarations came from, for the module's header line. */
function provenance(files: string[], url: string | undefined): string {
  const parts = [];
  if (files.length > 0) parts.push(files.join(", "));
  if (url !== undefined) parts.push(`the workflows deployed at ${redactUrl(url)}`);
  return parts.join(" and ");
}

/**
 * `slotflow types [FILE…] [--url URL --token T] --out FILE.ts`: writes the declarations; returns
 * the exit code (1 when a file does not compile; nothing is written then).
 */
export async function typesCommand(files: string[], opts: { out: string; url?: string; token?: string }, out: Out, err: Out): Promise<number> {
  if (files.length === 0 && opts.url === undefined) throw new StartupError("name .flow files, or a server with --url (and --token or SLOTFLOW_ADMIN_TOKEN)");
  const fromFiles = signaturesOfFiles(files, err);
  if (fromFiles === null) return 1;
  let all = fromFiles;
  if (opts.url !== undefined) {
    const token = opts.token ?? process.env.SLOTFLOW_ADMIN_TOKEN;
    if (!token) throw new StartupError("--url needs the server's admin token: --token or SLOTFLOW_ADMIN_TOKEN");
    all = [...fromFiles, ...(await signaturesOfServer(opts.url, token))];
  }
  let text: string;
  try {
    text = declarations(all, provenance(files, opts.url));
  } catch (e) {
    throw new StartupError((e as Error).message);
  }
  try {
    writeFileSync(opts.out, text);
  } catch (e) {
    throw new StartupError(`cannot write ${opts.out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  out(`${opts.out}: declarations of ${all.length} workflow${all.length === 1 ? "" : "s"} (${all.map((s) => s.name).sort().join(", ") || "none"})`);
  return 0;
}

/**
 * `slotflow check --types FILE.ts FILE.flow…`: 0 when FILE.ts is what `slotflow types FILE.flow…
 * --out FILE.ts` would write now (its header aside), else 1 with a line saying it is stale and
 * the command that regenerates it. Files that do not compile are reported by `check` itself.
 */
export function checkTypesCommand(typesFile: string, files: string[], err: Out): number {
  let current: string;
  try {
    current = readFileSync(typesFile, "utf8");
  } catch (e) {
    err(`${typesFile}: error: cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return 1;
  }
  const signatures = signaturesOfFiles(files, () => undefined);
  if (signatures === null) return 1; // the diagnostics were printed by check
  const regenerate = `slotflow types ${files.join(" ")} --out ${typesFile}`;
  let fresh: string;
  try {
    fresh = declarations(signatures, "");
  } catch (e) {
    err(`${typesFile}: error: ${(e as Error).message}`);
    return 1;
  }
  const have = comparedPart(current);
  if (have === null) {
    err(`${typesFile}: error: not a file \`slotflow types\` wrote (its marker line is missing); generate it: ${regenerate}`);
    return 1;
  }
  if (have !== comparedPart(fresh)) {
    err(`${typesFile}: error: stale: the declarations differ from what ${files.join(", ")} declare now; generate them again: ${regenerate}`);
    return 1;
  }
  return 0;
}
