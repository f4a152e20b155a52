/**
 * Lint (issue 16): no recursive function over request data without a depth parameter. Every
 * TypeScript file under src/engine, src/lang/runtime, src/lang/families, src/web, src/queue and src/outbox is transpiled with esbuild and
 * parsed with acorn; a function that calls itself (directly, by its own name) must take a
 * parameter named `depth` (or `level`), so the walk can stop at a bound instead of exhausting the
 * stack. Functions that recurse only over trusted, compiled structures (the compiled workflow's
 * types, bounded by the source's nesting limit) are listed in ALLOWED with the reason.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import test from "ava";
import * as acorn from "acorn";
import * as walk from "acorn-walk";
import { transformSync } from "esbuild";
import { ROOT } from "../helpers/root.js";


const DIRS = ["src/engine", "src/lang/runtime", "src/lang/families", "src/json", "src/web", "src/queue", "src/outbox"];

/** file:function → why its recursion is not over request data. */
const ALLOWED: Record<string, string> = {
  "src/engine/values/body.ts:valueSchema": "recurses over the compiled parameter type (bounded by the source), not over the body",
  "src/lang/runtime/values.ts:jsonTypeName": "recurses over a compiled TypeSpec, not over request data",
  "src/engine/versions/deploy.ts:typeText": "recurses over a compiled parameter type, not over request data",
  "src/lang/runtime/evaluate.ts:evaluate": "recurses over the compiled expression tree (the lexer bounds the source's nesting), not over values",
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.ts$/.test(name) && !/\.d\.ts$/.test(name) ? [path] : [];
  });
}

interface Found {
  where: string;
  params: string[];
}

/** Recursive functions of `source`: named functions (declarations, `const f = …`, methods) that call their own name. */
function recursiveFunctions(source: string): Found[] {
  const js = transformSync(source, { loader: "ts", format: "esm", target: "es2022" }).code;
  const ast = acorn.parse(js, { ecmaVersion: "latest", sourceType: "module" });
  const out: Found[] = [];
  const check = (name: string, fn: any, method = false) => {
    let calls = false;
    // a call by name, or the function passed by name (`list.map(walk)`), or `this.walk(…)`
    walk.full(fn.body, (node: any) => {
      if (!method && node.type === "Identifier" && node.name === name) calls = true;
      if (node.type === "MemberExpression" && node.object.type === "ThisExpression" && node.property.name === name) calls = true;
    });
    if (!calls) return;
    const params = fn.params.map((p: any) => (p.type === "AssignmentPattern" ? p.left.name : p.name) ?? "?");
    out.push({ where: name, params });
  };
  walk.full(ast, (node: any) => {
    if (node.type === "FunctionDeclaration" && node.id) check(node.id.name, node);
    else if (node.type === "VariableDeclarator" && node.id.type === "Identifier" && node.init && /FunctionExpression|ArrowFunctionExpression/.test(node.init.type)) check(node.id.name, node.init);
    else if (node.type === "MethodDefinition" && node.key.type === "Identifier") check(node.key.name, node.value, true);
  });
  return out;
}

test("the lint finds a recursive function without a depth parameter", (t) => {
  const found = recursiveFunctions("export function walk(v: unknown): number { return Array.isArray(v) ? v.map(walk).length + walk(v[0]) : 0; }");
  t.deepEqual(found, [{ where: "walk", params: ["v"] }]);
  t.deepEqual(recursiveFunctions("const f = (v: unknown, depth: number): number => (depth > 9 ? 0 : f(v, depth + 1));")[0].params, ["v", "depth"]);
});

test("every recursive function in src/engine, src/lang/runtime, src/lang/families, src/json, src/web, src/queue and src/outbox takes a depth parameter", (t) => {
  const offenders: string[] = [];
  let seen = 0;
  for (const dir of DIRS) {
    for (const file of files(join(ROOT, dir))) {
      const rel = relative(ROOT, file);
      for (const f of recursiveFunctions(readFileSync(file, "utf8"))) {
        seen++;
        const key = `${rel}:${f.where}`;
        if (ALLOWED[key]) continue;
        if (!f.params.some((p) => p === "depth" || p === "level")) offenders.push(`${key}(${f.params.join(", ")})`);
      }
    }
  }
  t.true(seen > 0, "the scan found no recursive function at all: the lint itself is broken");
  t.deepEqual(offenders, [], `recursive walks without a depth parameter:\n${offenders.join("\n")}`);
});
