-- v0.5 Results (issue 40 item 4): the fields the last `result { … }` of a run set, sealed like the
-- run's input (engine/step.ts setResult); NULL while none has run. The run's result shown by the
-- API is {state, …these fields} once the run has finished (engine/views/result.ts).
ALTER TABLE "runs" ADD COLUMN "result" JSONB;
