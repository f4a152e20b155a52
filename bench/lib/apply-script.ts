/** Placeholder until the hot SQL has its home: the ceilings need the deposit's statements. */
import type { BenchCluster } from "./cluster.js";
export function applyScript(): string {
  throw new Error("apply script not available yet");
}
export async function seedForScript(_bench: BenchCluster): Promise<void> {}
