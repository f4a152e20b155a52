// examples/app/src/main.ts — a small service of your own that uses slotflow (examples/app/README.md):
// it serves the `call task "credit-score"` of flows/credit-order.flow with slotflow/worker, starts
// a CreditOrder run with slotflow/client, and awaits its typed result.
//
//   BASE_URL=http://localhost:3000 SLOTFLOW_ADMIN_TOKEN=… SLOTFLOW_WORKER_TOKEN=… npx tsx src/main.ts "Acme Ltd" 1200
import { createClient, SlotflowProblem } from "slotflow/client";
import { TaskError, TaskWorker } from "slotflow/worker";
import type { Workflows } from "./workflows.js";

type CreditOrder = Workflows["CreditOrder"];

/** The task types this service serves: what each is given (the call's `Input`) and answers (its `returns` event). */
type Tasks = {
  "credit-score": { input: { customer: string; amount: number }; answer: CreditOrder["events"]["Scored"] };
};

const url = process.env.BASE_URL ?? "http://localhost:3000";

/** Stands for your credit bureau: a score from the customer's name and the amount (deterministic, for the example). */
function score(customer: string, amount: number): number {
  const base = [...customer].reduce((sum, ch) => sum + ch.charCodeAt(0), 0) % 400;
  return Math.max(300, 850 - base - Math.floor(amount / 1000));
}

const worker = new TaskWorker<Tasks>({
  url,
  token: process.env.SLOTFLOW_WORKER_TOKEN ?? "",
  concurrency: 4,
  waitSeconds: 10,
  tasks: {
    "credit-score": async (input, ctx) => {
      // ctx.taskId is the same on every attempt: the idempotency key of your own side effects
      if (!input.customer.trim()) throw new TaskError("no customer name", { retry: false }); // fails the call now
      const s = score(input.customer, input.amount);
      return { score: s, band: s >= 700 ? "A" : s >= 600 ? "B" : "C" };
    },
  },
  onError: (err) => console.error(`task worker: ${err.message}`),
});
const serving = worker.run();

const slotflow = createClient<Workflows>({ url, token: process.env.SLOTFLOW_ADMIN_TOKEN ?? "dev-admin-token" });
const [customer = "Acme Ltd", amount = "1200"] = process.argv.slice(2);
try {
  const run = await slotflow.start("CreditOrder", { order: { customer, amount: Number(amount) } });
  console.log(`started ${run.id}`);
  const ended = await slotflow.runs.result(run.id, { waitSeconds: 60 });
  if (ended.status === "finished") {
    // typed by `returns Decision`: state is "Accepted" | "Declined", score a number or null
    console.log(`${ended.result.state}: score ${ended.result.score ?? "none"}, ${ended.result.note ?? "no note"}`);
  } else {
    console.log(`the run is ${ended.status}`);
  }
} catch (err) {
  if (err instanceof SlotflowProblem) console.error(`slotflow refused: ${err.status} ${err.code}: ${err.message}`);
  else throw err;
  process.exitCode = 1;
} finally {
  await worker.stop(); // stops polling; finishes the tasks it holds
  await serving;
}
