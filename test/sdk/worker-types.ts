/**
 * Compile-time checks of `slotflow/worker`'s typing (issue 41 item 3; docs/sdk.md "Task workers"),
 * run by `npm run typecheck` (never executed): with a task map, each handler's input and answer are
 * typed, a wrong answer and a missing handler are compile errors.
 */
import { TaskWorker } from "../../src/sdk/worker.js";

type Tasks = { "credit-check": { input: { company: string }; answer: { score: number; band: string } } };

export const typed = () => [
  new TaskWorker<Tasks>({ url: "http://x", token: "t", tasks: { "credit-check": async (input) => ({ score: input.company.length, band: "A" }) } }),
  // @ts-expect-error a wrong answer type
  new TaskWorker<Tasks>({ url: "http://x", token: "t", tasks: { "credit-check": async () => ({ score: "high", band: "A" }) } }),
  // @ts-expect-error a missing handler
  new TaskWorker<Tasks>({ url: "http://x", token: "t", tasks: {} }),
  // untyped: any input
  new TaskWorker({ url: "http://x", token: "t", tasks: { anything: async (input) => ({ echoed: input.whatever }) } }),
];
