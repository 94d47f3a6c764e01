// test/support/wait.ts: until and never report what did or did not happen; nextEvent takes the next event.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { never, nextEvent, until } from "../support/wait.ts";

describe("wait helpers", () => {
  it("until resolves once the condition holds and names what never happened", async () => {
    let n = 0;
    await until("three polls", () => ++n >= 3, 5000, 1);
    assert.equal(n, 3);
    await assert.rejects(until("the impossible", () => false, 20, 1), /timed out after 20 ms waiting for the impossible/);
  });

  it("never passes a quiet period and rejects as soon as the thing happens", async () => {
    await never("nothing", () => false, 20, 1);
    let flips = 0;
    await assert.rejects(never("a flip", () => ++flips >= 2, 5000, 1), /a flip happened within 5000 ms/);
    assert.equal(flips, 2);
  });

  it("nextEvent gives the event's arguments, or times out naming it", async () => {
    const e = new EventEmitter();
    queueMicrotask(() => e.emit("state", "connected", 1));
    assert.deepEqual(await nextEvent(e, "state", 5000), ["connected", 1]);
    await assert.rejects(nextEvent(e, "state", 10, "a second state"), /waiting for a second state/);
    assert.equal(e.listenerCount("state"), 0);
  });
});
