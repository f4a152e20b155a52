/**
 * The `date` type at run time, through the testing kit on real PostgreSQL (language reference,
 * "Types"): a date in run input and a tracked row, `today()` (the step's UTC day), `d + 3d`,
 * `date - date`, ordering, concatenation as `YYYY-MM-DD`, and a date answered through a link.
 */
import test from "ava";
import { RefusalError, Workflow } from "slotflow/testing";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "kitdate");

const FLOW = `workflow DatedOrder(order: Order)
entity Order {
  vendorEmail: string
  wanted: date
  promised: date?
  remindOn: date?
  log: string?
}
event Confirm(delivery: date @label("Delivery date"))
initial state Waiting {
  subscribe Confirm(delivery) as confirm { Deadline: 5d }
  enter {
    order.remindOn = today() + 3d
    send email to order.vendorEmail { subject: "Deliver by " + order.wanted, body: confirm.CallbackUrl() }
  }
  on confirm(delivery) {
    order.promised = delivery
    order.log = "late by " + (delivery - order.wanted) + ", asked on " + ((order.remindOn ?? today()) - 3d)
    when (delivery <= order.wanted && delivery >= today()) -> OnTime
    default -> Late
  }
}
terminal state OnTime
terminal state Late
`;

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

test("a date from run input, today() + 3d in a row, a date answered through the link, compared and subtracted", async (t) => {
  const wf = await Workflow.deploy(FLOW);
  const wanted = day(10);
  const run = await wf.start({ order: { vendorEmail: "sales@vendor.example", wanted } });
  t.is(run.entities.order.wanted, wanted);
  t.is(run.entities.order.remindOn, day(3), "today() is the step's UTC day");
  const [mail] = await run.outbox();
  t.is(mail.subject, `Deliver by ${wanted}`, "a date joins a string as YYYY-MM-DD");

  // A date-time where a date is asked is refused, and the link is not spent.
  const refused = await t.throwsAsync(Workflow.Redeem(mail.body!, { delivery: `${day(12)}T00:00:00Z` }), { instanceOf: RefusalError });
  t.is(refused!.code, "invalid-body");

  await Workflow.Redeem(mail.body!, { delivery: day(12) });
  await run.refresh();
  t.is(run.state, "Late");
  t.is(run.entities.order.promised, day(12));
  t.is(run.entities.order.log, `late by P2D, asked on ${day(0)}`);
});

test("a date on or before the wanted day moves the run on time", async (t) => {
  const wf = await Workflow.deploy(FLOW);
  const run = await wf.start({ order: { vendorEmail: "sales@vendor.example", wanted: day(10) } });
  const [mail] = await run.outbox();
  await Workflow.Redeem(mail.body!, { delivery: day(10) });
  await run.refresh();
  t.is(run.state, "OnTime");
  t.is(run.entities.order.log, `late by PT0S, asked on ${day(0)}`);
});
