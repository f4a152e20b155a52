/**
 * slotflow's package entry (`import … from "slotflow"`): the compiler, the refusal codes, the
 * configuration reader and the migration runner. Workflow tests use `slotflow/testing`; the
 * processes run through the `slotflow` command (README.md).
 */
export { compile, formatDiagnostic, type CompileResult } from "./lang/compile.js";
export type { Diagnostic } from "./lang/diagnostics.js";
export { RefusalCode, RefusalError, type Refusal } from "./engine/refusals.js";
export { ConfigError, loadConfig, type Config } from "./config.js";
export { migrate, MigrationError, type MigrationResult } from "./migrate.js";
