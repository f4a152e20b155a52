/**
 * The layer rules of src/ (issue 34 item 2; docs/architecture.md "Layers"), checked by
 * dependency-cruiser in CI (`npm run lint:deps`). TypeScript is parsed with swc (dependency-cruiser
 * cannot use TypeScript 7's compiler), type-only imports included: a type-only circle is still a
 * circle a reader has to untangle.
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import circle anywhere in src/ (style.md 12–13: the step below the lifecycles, not beside them).",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "lang-imports-no-engine",
      severity: "error",
      comment: "The language (parser, checker, compiler) knows nothing of the engine, the web, the CLI or the queues.",
      from: { path: "^src/lang/" },
      to: { path: "^src/(engine|web|cli|queue|outbox|operators|endpoints|authoring|testing)/" },
    },
    {
      name: "engine-imports-no-doors",
      severity: "error",
      comment: "The engine imports no web, no CLI, no console, no authoring tools: doors depend on the engine, never the reverse.",
      from: { path: "^src/engine/" },
      to: { path: "^src/(web|cli|authoring|testing)/" },
    },
    {
      name: "doors-use-public-engine-modules",
      severity: "error",
      comment:
        "The web, the CLI and the workers reach the engine only through its public modules: the commands they send, apply.ts, the read views, and the values and refusals they show — never its hot SQL, the step, or a lifecycle's internals.",
      from: { path: "^(src/web|src/cli|workers)/" },
      to: { path: "^src/engine/(sql/|step\\.ts|slot\\.ts|link\\.ts|timer\\.ts|run\\.ts|lifecycles\\.ts|interpreter\\.ts)" },
    },
  ],
  options: {
    parser: "swc",
    tsPreCompilationDeps: true,
    exclude: { path: "^src/generated/" },
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
  },
};
