// One run at a time: a call made while a run is under way shares that run's promise. For the
// batched writers' flush (pending-batch.ts), called by a timer, by shutdown and by tests, which
// must never write the same batch twice in parallel.

export function singleFlight(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () =>
    (running ??= run().finally(() => {
      running = undefined;
    }));
}
