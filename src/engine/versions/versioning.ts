/**
 * Links across deploys (callback-links spec §9; language reference "Versioning").
 *
 * A link records the version it was minted under. A deposit's body is validated (by the web
 * process) against the slot's event as it was at that version, then translated forward here,
 * version by version, to the run's current version: where version v authored
 * `map event E(prev) to E2(name: expr, …)` for the event in hand, the arguments become E2's,
 * computed from the previous ones; where it did not, the event is unchanged (a deploy that
 * changes an event's parameters without a mapping is refused, so no other case exists).
 */
import type { CompiledEvent } from "../../lang/compiled.js";
import { evaluate, RuntimeFault, Scope } from "../../lang/runtime/interpreter.js";
import { RefusalCode, refuse, type Refusal } from "../refusals.js";
import type { Step } from "../step.js";
import { fromJson, toJson } from "../../lang/runtime/values.js";
import { loadVersion } from "./workflows.js";

/** The event a slot alias of `state` subscribes to in a given version, or null. */
export async function eventAtVersion(step: Step, state: string, alias: string, version: number): Promise<CompiledEvent | null> {
  const wf = version === step.run.version ? step.workflow : await loadVersion(step.services.tx, step.run.workflowName, version);
  const slot = wf.states[state]?.slots.find((s) => s.alias === alias);
  return slot ? (wf.events[slot.event] ?? null) : null;
}

/** Translates JSON arguments valid at `mintedVersion` to the run's current version. */
export async function translateArgs(
  step: Step,
  alias: string,
  state: string,
  mintedVersion: number,
  args: Record<string, unknown>,
): Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; refusal: Refusal }> {
  if (mintedVersion === step.run.version) return { ok: true, args };
  let event = await eventAtVersion(step, state, alias, mintedVersion);
  if (!event) return { ok: false, refusal: refuse(RefusalCode.LinkDead, "This link no longer works: its slot no longer exists.", { reason: "cancelled" }) };
  let current = args;
  for (let v = mintedVersion + 1; v <= step.run.version; v++) {
    const wf = await loadVersion(step.services.tx, step.run.workflowName, v);
    const map = wf.maps.find((m) => m.from === event!.name);
    if (!map) {
      event = wf.events[event.name] ?? event;
      continue;
    }
    const scope = Scope.of(Object.fromEntries(map.fromParams.map((p) => [p.name, fromJson(current[p.name], p.type)])));
    const next: Record<string, unknown> = {};
    for (const a of map.args) {
      try {
        next[a.name.toString()] = toJson(evaluate(step, scope, a.value));
      } catch (err) {
        if (err instanceof RuntimeFault) throw new RuntimeFault(`map event ${map.from} → ${map.to} (version ${v}): ${err.message}`);
        throw err;
      }
    }
    current = next;
    event = wf.events[map.to];
  }
  return { ok: true, args: current };
}
