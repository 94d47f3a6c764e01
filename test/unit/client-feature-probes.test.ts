// The feature probes against a scripted server: sequential to a server never seen, both in one write to
// a server seen at 3.5+ (and not waited for: the session is connected on the features seen last time),
// and back to sequential when that server turns out to be 3.4 (which drops the link on removeWatches, an
// opcode it does not know).
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import net from "node:net";
import { OpCode } from "../../src/protocol/constants.ts";
import { ZooKeeper } from "../../src/index.ts";
import { until } from "../support/wait.ts";

type Mode = "3.9" | "3.4";

/** Frames with the index of the socket read ('data' event) they arrived in. */
interface Seen {
  conn: number;
  chunk: number;
  opcode: number;
}

function reply(xid: number, err: number, body = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(20 + body.length);
  b.writeInt32BE(16 + body.length, 0);
  b.writeInt32BE(xid, 4);
  b.writeBigInt64BE(1n, 8);
  b.writeInt32BE(err, 16);
  body.copy(b, 20);
  return b;
}

interface Scripted {
  port: number;
  mode: Mode;
  /** Probe replies are held until the next other request arrives (or, as a fallback, for 5 s). */
  holdProbes: boolean;
  /** A hold ended by the fallback timer: the client waited for the probes' replies. */
  heldTooLong: boolean;
  seen: Seen[];
  close(): Promise<void>;
}

async function scriptedServer(): Promise<Scripted> {
  const state = { mode: "3.9" as Mode, seen: [] as Seen[], holdProbes: false, heldTooLong: false };
  const sockets = new Set<net.Socket>();
  let conns = 0;
  const server = net.createServer((s) => {
    const conn = ++conns;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    let acc = Buffer.alloc(0);
    let chunk = 0;
    let handshaken = false;
    let held: Buffer[] = [];
    let fallback: NodeJS.Timeout | undefined;
    const release = (): void => {
      clearTimeout(fallback);
      for (const r of held.splice(0)) s.write(r);
    };
    const answer = (r: Buffer, probe: boolean): void => {
      if (!probe) {
        release();
        s.write(r);
      } else if (state.holdProbes) {
        held.push(r);
        fallback ??= setTimeout(() => {
          state.heldTooLong = true;
          release();
        }, 5000);
      } else s.write(r);
    };
    s.on("close", () => clearTimeout(fallback));
    s.on("data", (c: Buffer) => {
      chunk++;
      acc = Buffer.concat([acc, c]);
      while (acc.length >= 4 && acc.length >= 4 + acc.readInt32BE(0)) {
        const f = acc.subarray(4, 4 + acc.readInt32BE(0));
        acc = acc.subarray(4 + f.length);
        if (!handshaken) {
          handshaken = true;
          const r = Buffer.alloc(4 + 4 + 4 + 8 + 4 + 16 + 1);
          r.writeInt32BE(r.length - 4, 0);
          r.writeInt32BE(30_000, 8);
          const asked = f.readBigInt64BE(16); // ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId
          r.writeBigInt64BE(asked === 0n ? BigInt(conn) : asked, 12); // a reconnect resumes its session
          r.writeInt32BE(16, 20);
          s.write(r);
          continue;
        }
        const xid = f.readInt32BE(0);
        const opcode = f.readInt32BE(4);
        state.seen.push({ conn, chunk, opcode });
        if (opcode === OpCode.exists) answer(state.mode === "3.4" ? reply(xid, -101) : reply(xid, 0, Buffer.alloc(68)), true);
        else if (opcode === OpCode.removeWatches) {
          if (state.mode === "3.4") s.destroy(); // what a 3.4 server does with an opcode it does not know
          else answer(reply(xid, -121), true); // NOWATCHER: 3.9+
        } else if (opcode === OpCode.closeSession) {
          release();
          s.end(reply(xid, 0));
        } else if (opcode === OpCode.ping) answer(reply(xid, 0), false);
        else if (opcode === OpCode.getData) answer(reply(xid, 0, Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.alloc(68)])), false);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as net.AddressInfo).port,
    get mode() {
      return state.mode;
    },
    set mode(m: Mode) {
      state.mode = m;
    },
    get holdProbes() {
      return state.holdProbes;
    },
    set holdProbes(h: boolean) {
      state.holdProbes = h;
    },
    get heldTooLong() {
      return state.heldTooLong;
    },
    seen: state.seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("feature probes", () => {
  it("go one at a time to a new server, together to one seen at 3.5+, and one at a time again after it turns out 3.4", async () => {
    const srv = await scriptedServer();
    try {
      const cs = `127.0.0.1:${srv.port}`;
      const probes = (conn: number) => srv.seen.filter((x) => x.conn === conn && (x.opcode === OpCode.exists || x.opcode === OpCode.removeWatches));

      let zk = await ZooKeeper.connect(cs, { sessionTimeout: 30_000 });
      assert.equal(zk.serverFeatures.generation, "3.9+");
      await zk.close();
      const [a, b] = probes(1);
      assert.ok(a && b && a.opcode === OpCode.exists && b.opcode === OpCode.removeWatches);
      assert.ok(b.chunk > a.chunk, "the first time, removeWatches goes only after exists' reply");

      // Seen at 3.9: connected without waiting for the probes (the server holds their replies until the
      // next request), which go out with the link's next write, here a getData's, ahead of it.
      srv.holdProbes = true;
      zk = await ZooKeeper.connect(cs, { sessionTimeout: 30_000 });
      assert.equal(zk.serverFeatures.generation, "3.9+");
      assert.deepEqual(probes(2), [], "no write of their own");
      await zk.getData("/x");
      await zk.close();
      srv.holdProbes = false;
      assert.equal(srv.heldTooLong, false, "connect() waited for the probes' replies to a server seen at 3.9");
      const [c, d, e] = srv.seen.filter((x) => x.conn === 2);
      assert.ok(c && d && e && c.opcode === OpCode.exists && d.opcode === OpCode.removeWatches && e.opcode === OpCode.getData);
      assert.ok(c.chunk === d.chunk && d.chunk === e.chunk, "a server seen at 3.9 gets both probes in the next request's write");

      // A session closed before its link wrote anything else: the probes are never sent.
      zk = await ZooKeeper.connect(cs, { sessionTimeout: 30_000 });
      await zk.close();
      assert.deepEqual(srv.seen.filter((x) => x.conn === 3).map((x) => x.opcode), [OpCode.closeSession]);

      srv.mode = "3.4";
      const before = new Set(srv.seen.map((x) => x.conn));
      zk = await ZooKeeper.connect(cs, { sessionTimeout: 30_000 });
      // Connected on what it was (3.9+); the probes go with the first request, their answers end that
      // link, and the session reconnects and probes one at a time.
      void zk.getData("/x").catch(() => {});
      await until("the session learnt that the server is now 3.4", () => zk.serverFeatures.generation === "3.4");
      assert.equal(zk.state, "connected");
      await zk.close();
      const conns = [...new Set(srv.seen.map((x) => x.conn))].filter((n) => !before.has(n));
      assert.ok(conns.length >= 2, "the link a 3.4 server drops is replaced by a new one");
      assert.deepEqual(probes(conns.at(-1)!).map((x) => x.opcode), [OpCode.exists], "then exists alone: no removeWatches to a 3.4 server");
    } finally {
      await srv.close();
    }
  });
});
