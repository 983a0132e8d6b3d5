import type { SlotReserveContext, WorkflowSlotInfo } from "@temporalio/worker";
import { expect } from "chai";
import { WorkflowTaskSlots } from "../../workers/workflow-task-slots.js";
import { settled } from "../support/settled.js";

// The slot accounting the SDK drives (reserve, mark used, release) and the starts see.
// The end-to-end effect, a burst started eagerly, is in eager-start.test.ts.

const ctx = {} as SlotReserveContext;
const stickyCtx = { isSticky: true } as SlotReserveContext;
const info: WorkflowSlotInfo = { type: "workflow", workflowType: "deliverWebhook", isSticky: false };
const never = () => new AbortController().signal;

/** A start that came back with its eager task: the task holds the slot until `release`. */
function eagerTask(slots: WorkflowTaskSlots) {
  const permit = slots.tryReserveSlot(ctx);
  expect(permit).to.not.equal(null);
  slots.markSlotUsed({ slotInfo: info, permit: permit! });
  slots.started();
  return () => slots.releaseSlot({ slotInfo: info, permit: permit! });
}

describe("workflow-task slots", () => {
  it("lets starts through while the slots no poll holds suffice, counting starts under way", async () => {
    const slots = new WorkflowTaskSlots(4);
    await slots.reserveSlot(ctx, never());
    await slots.reserveSlot(ctx, never()); // two idle polls
    const first = slots.whenFree(60_000);
    const second = slots.whenFree(60_000);
    const third = slots.whenFree(60_000);
    expect(await settled(first)).to.equal(true);
    expect(await settled(second)).to.equal(true);
    expect(await settled(third)).to.equal(false);
    expect(slots.waitingStarts).to.equal(1);

    // The first start came back with its eager task: all four slots are held.
    const finish = eagerTask(slots);
    expect(await settled(third)).to.equal(false);
    // The second came back without a task (a plain start): its slot goes to the third.
    slots.started();
    expect(await settled(third)).to.equal(true);
    expect(slots.held).to.equal(3);
    finish();
    expect(slots.held).to.equal(2);
  });

  it("wakes waiting starts in the order they asked, as slots come free", async () => {
    const slots = new WorkflowTaskSlots(1);
    await slots.whenFree(60_000);
    const finish = eagerTask(slots);
    const order: number[] = [];
    const a = slots.whenFree(60_000).then(() => order.push(1));
    const b = slots.whenFree(60_000).then(() => order.push(2));
    await settled(a);
    expect(order).to.deep.equal([]);
    finish();
    await settled(a);
    expect(order).to.deep.equal([1]);
    eagerTask(slots)();
    await settled(b);
    expect(order).to.deep.equal([1, 2]);
  });

  it("lets a start go after the longest wait even when no slot came free", async () => {
    const slots = new WorkflowTaskSlots(1);
    await slots.whenFree(60_000);
    eagerTask(slots);
    const started = Date.now();
    await slots.whenFree(50);
    expect(Date.now() - started).to.be.at.least(45);
    expect(slots.waitingStarts).to.equal(0);
    expect(slots.tryReserveSlot(ctx)).to.equal(null);
  });

  it("gives a freed slot to a waiting poll before a waiting start, and never more than the maximum", async () => {
    const slots = new WorkflowTaskSlots(2);
    const a = await slots.reserveSlot(ctx, never());
    await slots.reserveSlot(stickyCtx, never());
    expect(slots.tryReserveSlot(ctx)).to.equal(null);
    const start = slots.whenFree(60_000);
    const poll = slots.reserveSlot(ctx, never());
    // A poll that never got a task gives its permit back (no slot info).
    slots.releaseSlot({ permit: a });
    expect(await settled(poll)).to.equal(true);
    expect(await settled(start)).to.equal(false);
    expect(slots.tryReserveSlot(ctx)).to.equal(null);
  });

  it("keeps the slot a start was let through for from a poll that asks before the start's eager task", async () => {
    const slots = new WorkflowTaskSlots(2);
    await slots.reserveSlot(stickyCtx, never());
    await slots.whenFree(60_000);
    const poll = slots.reserveSlot(ctx, never());
    expect(await settled(poll)).to.equal(false);
    // The start's eager task gets its slot; the poll gets the slot once that task is done.
    const finish = eagerTask(slots);
    expect(await settled(poll)).to.equal(false);
    finish();
    expect(await settled(poll)).to.equal(true);
  });

  it("drops a waiting poll that the SDK aborts, with the SDK's own reason", async () => {
    const slots = new WorkflowTaskSlots(1);
    const held = await slots.reserveSlot(ctx, never());
    const abort = new AbortController();
    const waiting = slots.reserveSlot(ctx, abort.signal);
    const reason = new Error("poller shut down");
    abort.abort(reason);
    let caught: unknown;
    await waiting.catch((err) => {
      caught = err;
    });
    expect(caught).to.equal(reason);
    // The freed slot is not handed to the aborted poll.
    slots.releaseSlot({ permit: held });
    expect(slots.tryReserveSlot(ctx)).to.not.equal(null);
  });

  it("never lets idle polls of one queue hold every slot", async () => {
    // Local sends end in their first task and bring the sticky queue nothing: its idle
    // poll must not take the slot the first tasks of new deliveries need.
    const slots = new WorkflowTaskSlots(2);
    await slots.reserveSlot(stickyCtx, never());
    const secondSticky = slots.reserveSlot(stickyCtx, never());
    expect(await settled(secondSticky)).to.equal(false);
    const normal = await slots.reserveSlot(ctx, never());
    expect(slots.held).to.equal(2);
    // Sends on the queue bring their results to the sticky queue: idle normal polls
    // must not hold every slot either. A freed slot skips the poll it may not go to.
    const nextNormal = slots.reserveSlot(ctx, never());
    slots.releaseSlot({ permit: normal });
    expect(await settled(nextNormal)).to.equal(true);
    expect(await settled(secondSticky)).to.equal(false);
    const thirdNormal = slots.reserveSlot(ctx, never());
    expect(await settled(thirdNormal)).to.equal(false);
  });

  it("counts a poll as idle only until its task arrives", async () => {
    const slots = new WorkflowTaskSlots(3);
    const first = await slots.reserveSlot(stickyCtx, never());
    await slots.reserveSlot(stickyCtx, never());
    const third = slots.reserveSlot(stickyCtx, never());
    expect(await settled(third)).to.equal(false);
    // A start may use the slot the idle sticky polls leave.
    expect(await settled(slots.whenFree(60_000))).to.equal(true);
    slots.started();
    // The first poll got a task: the third may poll in its place once a slot is free.
    slots.markSlotUsed({ slotInfo: { ...info, isSticky: true }, permit: first });
    expect(await settled(third)).to.equal(true);
    expect(slots.held).to.equal(3);
    slots.releaseSlot({ slotInfo: { ...info, isSticky: true }, permit: first });
    expect(slots.held).to.equal(2);
  });
});
