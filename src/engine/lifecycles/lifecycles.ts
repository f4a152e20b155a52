/**
 * The lifecycle operations a step is handed (issue 34 item 2; style.md 12–13).
 *
 * Layers, bottom up: `step.ts` (the unit of work: one read, in-memory changes, one write) knows
 * nothing of slots' or links' rules; `slot.ts`, `link.ts`, `timer.ts` and `run.ts` (the lifecycles)
 * change a step; the interpreter evaluates against the `World` the step implements. The step's
 * few calls upward — `x.done`, `x.CallbackUrl()`, `drop slot x`, and which links a flush ends —
 * go through `StepLifecycles`, which this module builds from the lifecycle modules. Whoever makes a
 * step (apply.ts, commands/start.ts, upgrade.ts, responder.ts) passes `LIFECYCLES` in its services,
 * so no import circle runs between the step and the lifecycles (checked in CI by
 * dependency-cruiser, `.dependency-cruiser.cjs`).
 */
import { mintLink, settleLinks } from "./link.js";
import { aliasCount, dropSlot, elementSlot, isAliasDone, isSlotLive, liveSlotForAlias } from "./slot.js";
import type { StepLifecycles } from "../step.js";

export const LIFECYCLES: StepLifecycles = {
  isAliasDone,
  aliasCount,
  mintCallbackUrl(step, alias, element) {
    if (element !== null) {
      // inside `each { … }` (v0.4): that one element's slot
      const slot = elementSlot(step, alias, element);
      return slot && isSlotLive(slot) ? mintLink(step, slot) : null;
    }
    const slot = liveSlotForAlias(step, alias);
    return slot ? mintLink(step, slot) : null;
  },
  dropSlot,
  settleLinks,
};
