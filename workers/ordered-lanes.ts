// The order in which one process hands the events of one ordering key to their ordered
// workflows: the order their messages arrived (NATS stream sequence, Kafka partition
// offset, the API's acceptance), although up to 64 are handled at once. An event takes
// its place in its key's lane synchronously, as its handling starts, and its signal to an
// ordered workflow waits until every earlier event of that lane was handled.
//
// An event whose hand-over failed goes back to the broker and comes again after its
// redelivery delay. Meanwhile its key is held: each later event of the lane fails too
// (its message comes back after the held one's, in arrival order) until the events held
// back have come again in that order and been handed over. The hold ends on its own once
// the last of them should have come back (plus a margin), so a message lost elsewhere (a
// dead letter, another process) cannot hold a key for good.

/**
 * Beyond a message's redelivery delay, for the broker to hand it out again and this process
 * to take it: on a loaded machine naked messages came back up to 5 s after their delay, and
 * a hold that lapses before its event is back lets a later event of the key go first. A
 * hold that lapses late only slows its key, and only where a message went to another process.
 */
export const HOLD_MARGIN_MS = 30_000;

/** A later event of a held key: it fails, transiently, and its message comes back after the earlier one. */
export class LaneHeld extends Error {
  constructor(orderingKey: string | undefined) {
    super(
      `an earlier event of ordering key ${JSON.stringify(orderingKey ?? "(the config id)")} waits for its ` +
        "redelivery: this one follows it",
    );
    this.name = "LaneHeld";
  }
}

/** How the broker brings back the event's message when its hand-over fails. */
export interface Redelivered {
  /** Its redelivery delay. */
  delayMs: number;
  /** This is its last delivery: it goes to the dead letters, not back to the lane. */
  last: boolean;
}

interface Hold {
  /** The events held back, by delivery key, in the order they must be handed over. */
  behind: string[];
  /** When the hold lapses (epoch ms). */
  until: number;
}

interface LaneState {
  /** Resolves once the last event that entered has left. */
  tail: Promise<void>;
  hold?: Hold;
}

export interface Lane {
  /** Resolves at the event's turn; rejects with LaneHeld when an earlier event of its key is held back. */
  turn: Promise<void>;
  /** Marks that an ordered config's hand-over of this event failed. */
  failed(): void;
  /** Ends its place: the next event of the lane may go once this one's turn has come. */
  leave(): void;
}

const lanes = new Map<string, LaneState>();

/** What names a lane: the event's tenant as it names it, and its ordering key. */
export interface LaneOf {
  tenant?: string | undefined;
  orderingKey?: string | undefined;
}

/**
 * Takes the event's place in the lane of its tenant's ordering key (a tenant's events
 * without one share a lane). Tenants never share a lane: one tenant's held event holds
 * none of another's, whatever their keys. (Its configs are not known yet when the event
 * arrives, so configs of one tenant using one key string share it.) `eventKey` names the
 * event across redeliveries; `redelivered` is undefined where a failure goes back to the
 * caller rather than to a broker (the API), and then holds nothing.
 */
export function enterLane(of: LaneOf, eventKey: string, redelivered?: Redelivered): Lane {
  const { orderingKey } = of;
  const name = JSON.stringify([of.tenant ?? null, orderingKey ?? null]);
  const state = lanes.get(name) ?? { tail: Promise.resolve() };
  lanes.set(name, state);
  const previous = state.tail;
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  state.tail = done;
  let failed = false;

  const turn = previous.then(() => {
    const hold = state.hold;
    if (!hold) return;
    if (Date.now() > hold.until) {
      state.hold = undefined;
      return;
    }
    if (hold.behind[0] === eventKey) return;
    if (!hold.behind.includes(eventKey)) hold.behind.push(eventKey);
    throw new LaneHeld(orderingKey);
  });
  // Awaited by each ordered config of the event, possibly by none.
  turn.catch(() => undefined);

  return {
    turn,
    failed() {
      failed = true;
    },
    leave() {
      // Only at its turn, even when it failed before awaiting it (its configs could not be
      // read): then it settles after every earlier event of its lane and passes the hold's
      // check at its place, so neither a later event nor the hold's order can overtake them.
      const finish = () => {
        settle(state, eventKey, failed, redelivered);
        release();
        if (state.tail === done && !state.hold) lanes.delete(name);
      };
      turn.then(finish, finish);
    },
  };
}

/** What the event's outcome does to its lane's hold. */
function settle(
  state: LaneState,
  eventKey: string,
  failed: boolean,
  redelivered: Redelivered | undefined,
): void {
  const hold = state.hold;
  if (!failed || !redelivered || redelivered.last) {
    // Handed over, or never coming back to this lane: the next held event may go.
    if (hold) {
      hold.behind = hold.behind.filter((k) => k !== eventKey);
      if (hold.behind.length === 0) state.hold = undefined;
    }
    return;
  }
  const until = Date.now() + redelivered.delayMs + HOLD_MARGIN_MS;
  if (!hold) state.hold = { behind: [eventKey], until };
  else {
    // The first to fail goes first; one held back keeps its place.
    if (!hold.behind.includes(eventKey)) hold.behind.unshift(eventKey);
    hold.until = Math.max(hold.until, until);
  }
}
