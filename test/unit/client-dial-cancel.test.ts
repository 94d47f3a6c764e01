// A dial's cancellation (transport.ts DialRequest): the default transport listens to it directly, and a
// Transport gets DialOptions.signal, a real AbortSignal made only when it reads it, aborted at the client's
// deadline (on the injected clock). A connect through a Transport that never looks at the signal makes no
// AbortController at all: counted by a counting AbortController put in the global's place for the test.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { type DialOptions, ErrorCode, type LinkHandlers, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { DialRequest, dialSocket } from "../../src/client/transport/transport.ts";
import { ManualClock, settle } from "../support/fakes/fake-clock.ts";
import { FakeZk, connectFake } from "../support/fakes/fake-zk.ts";

/** Runs `body` with AbortController counting its constructions; gives the count. */
async function countingControllers(body: () => Promise<void>): Promise<number> {
  const Original = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
  try {
    await body();
  } finally {
    globalThis.AbortController = Original;
  }
  return made;
}

/** A FakeZk that reads DialOptions.signal as a Transport that wires it to its socket would. */
class SignalReadingZk extends FakeZk {
  signals: AbortSignal[] = [];
  override connect(target: { host: string; port: number }, handlers: LinkHandlers, options?: DialOptions): ReturnType<FakeZk["connect"]> {
    if (options?.signal) this.signals.push(options.signal);
    return super.connect(target, handlers);
  }
}

describe("a dial's cancellation", () => {
  it("a connect + close through a Transport that never reads DialOptions.signal makes no AbortController; one that reads it gets one per dial", async () => {
    const quiet = await countingControllers(async () => {
      const zk = await connectFake(new ManualClock(), new FakeZk());
      assert.equal(zk.state, "connected");
      await zk.close();
    });
    assert.equal(quiet, 0);
    const server = new SignalReadingZk();
    const reading = await countingControllers(async () => {
      const zk = await connectFake(new ManualClock(), server);
      await zk.close();
    });
    assert.equal(reading, 1);
    assert.equal(server.signals.length, 1);
    assert.ok(server.signals[0] instanceof AbortSignal);
    assert.equal(server.signals[0]!.aborted, false, "a dial that succeeded is never aborted");
  });

  it("a Transport's signal (also from a spread copy of the options) aborts at the client's dial deadline, with the timeout as its reason; a link that comes later is closed", async () => {
    const clock = new ManualClock();
    const copies: DialOptions[] = [];
    let late: ((link: { write(b: Uint8Array): boolean; close(): void; remote: string }) => void) | null = null;
    let lateClosed = 0;
    const pending = ZooKeeper.connect("slow:2181", {
      clock,
      connectTimeout: 4000,
      sessionTimeout: 3000,
      transport: {
        connect: (_target, _handlers, options) => {
          copies.push({ ...options });
          return new Promise((resolve) => (late = resolve));
        },
      },
    });
    const outcome = pending.then(
      () => null,
      (e: unknown) => e,
    );
    await settle();
    assert.equal(copies.length, 1);
    const signal = copies[0]!.signal!;
    assert.ok(signal instanceof AbortSignal);
    // The first attempt's dial may take min(session timeout, half the connect timeout) = 2000 ms.
    await clock.advance(1999);
    assert.equal(signal.aborted, false);
    await clock.advance(1);
    assert.equal(signal.aborted, true);
    assert.match((signal.reason as Error).message, /connect to slow:2181 timed out after 2000 ms/);
    late!({ write: () => true, close: () => void lateClosed++, remote: "slow:2181" });
    await settle();
    assert.equal(lateClosed, 1, "the link that came after the abort was closed");
    await clock.advance(4000);
    const e = await outcome;
    assert.ok(e instanceof ZooKeeperError, String(e));
    assert.equal(e.code, ErrorCode.CONNECTIONLOSS);
    assert.match(e.message, /no session established within 4000 ms; last error: connect to slow:2181 timed out after 2000 ms/);
  });

  it("the default transport listens to the request itself: cancelled before or while the socket opens, the dial rejects with the reason", async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const handlers: LinkHandlers = { onData: () => assert.fail("no data"), onDrain: () => {}, onClose: () => {} };
    const target = { host: "127.0.0.1", port };
    try {
      const before = new DialRequest(target, undefined, 1000);
      before.cancel(new Error("given up before the dial"));
      await assert.rejects(dialSocket(target, handlers, before), /given up before the dial/);
      const during = new DialRequest(target, undefined, 1000);
      const dial = dialSocket(target, handlers, during);
      during.cancel(new Error("given up while dialling"));
      await assert.rejects(dial, /given up while dialling/);
      // A request nobody cancels: the link opens, and the request made no AbortController to get there.
      const made = await countingControllers(async () => {
        const link = await dialSocket(target, handlers, new DialRequest(target, undefined, 1000));
        link.close();
      });
      assert.equal(made, 0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
