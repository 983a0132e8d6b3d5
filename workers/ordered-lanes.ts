// The order in which one process hands the events of one ordering key to their ordered
// workflows: the order their messages arrived (NATS stream sequence, Kafka partition
// offset, the API's acceptance), although up to 64 are handled at once. An event takes
// its place in its key's lane synchronously, as its handling starts, and its signal to an
// ordered workflow waits until every earlier event of that lane was handled.

interface Lane {
  /** Resolves once the event before it in the lane was handled. */
  turn: Promise<void>;
  /** Ends its place: the next event of the lane may go. */
  leave(): void;
}

const tails = new Map<string, Promise<void>>();

/** Takes the event's place in the lane of its ordering key (events without one share a lane). */
export function enterLane(orderingKey: string | undefined): Lane {
  const name = orderingKey === undefined ? "" : `k:${orderingKey}`;
  const turn = tails.get(name) ?? Promise.resolve();
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  tails.set(name, done);
  return {
    turn,
    leave() {
      release();
      if (tails.get(name) === done) tails.delete(name);
    },
  };
}
