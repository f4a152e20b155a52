/**
 * The receipt of a completion (v0.4 "Many responders, forwarding, and receipts"): signed in the
 * step that completes the slot, kept on the slot (`slots.receipt`, written with the completion),
 * and returned in the command's outcome — so the outcome recorded in `applied_commands`, and a
 * retry under the same Idempotency-Key, give the very same receipt.
 */
import type { SlotRecord, Step } from "../step.js";
import { signReceipt } from "../receipts/sign.js";

/**
 * Signs the receipt of `slot`, just completed in `step` with `body` (the accepted arguments as
 * JSON), stores it on the slot and returns it; null when the process has no receipt key
 * (production without SLOTFLOW_RECEIPT_KEYS, or a caller that passed no key source).
 */
export async function issueReceipt(step: Step, slot: SlotRecord, body: Record<string, unknown>): Promise<string | null> {
  const source = step.services.receiptKeys;
  if (!source) return null;
  const [key] = await source();
  if (!key) return null;
  const receipt = await signReceipt(
    key,
    step.services.baseUrl,
    {
      runId: step.run.id,
      alias: slot.alias,
      element: slot.element,
      state: slot.state,
      visit: slot.visit,
      workflow: step.run.workflowName,
      version: step.run.version,
      event: slot.event,
      body,
      answeredBy: slot.answeredBy,
    },
    step.now,
  );
  slot.receipt = receipt;
  step.markSlotDirty(slot);
  return receipt;
}
