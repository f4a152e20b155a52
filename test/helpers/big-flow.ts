/**
 * Large valid `.flow` sources generated for the console's bounds tests (issue 28 items 2–3).
 */

/**
 * A workflow of `states` states (`S0` initial … `S{states-1}`, plus `terminal state Done`), each
 * waiting on `subscribe Go(n) as go` with one handler of `arms` `when` arms (arm k of state i goes
 * to `S{target(i, k)}`) and a default to `Done`. The handler's parameter is named `param`, so two
 * versions with different names differ on every arm line. Transitions: one per distinct
 * (state, target) plus one to Done per state — with the default `target` and `arms` < states/7,
 * `states × (arms + 1)`.
 */
export function bigFlow(name: string, states: number, arms: number, param = "n", target = (i: number, k: number) => (i + k * 7) % states): string {
  const out = [`workflow ${name}(who: string)`, "", "event Go(n: int)", ""];
  for (let i = 0; i < states; i++) {
    out.push(`${i === 0 ? "initial " : ""}state S${i} {`, "  subscribe Go(n) as go", `  on go(${param}) {`);
    for (let k = 1; k <= arms; k++) out.push(`    when (${param} == ${k}) -> S${target(i, k)}`);
    out.push("    default -> Done", "  }", "}", "");
  }
  out.push("terminal state Done", "");
  return out.join("\n");
}
