// The fault proxy against plain node:net servers started here (no ZooKeeper needed).
import net from "node:net";
import assert from "node:assert/strict";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { hold, never, until } from "../support/wait.ts";

// One end of a TCP connection, recording what it sees.
interface End {
  socket: net.Socket;
  data: Buffer;
  chunks: number;
  ended: boolean;
  closed: boolean;
  error: string | null;
}

function watch(socket: net.Socket): End {
  const e: End = { socket, data: Buffer.alloc(0), chunks: 0, ended: false, closed: false, error: null };
  socket.on("data", (b: Buffer) => {
    e.data = Buffer.concat([e.data, b]);
    e.chunks++;
  });
  socket.on("end", () => (e.ended = true));
  socket.on("close", () => (e.closed = true));
  socket.on("error", (err: NodeJS.ErrnoException) => (e.error = err.code ?? err.message));
  return e;
}


interface TestServer {
  port: number;
  conns: End[];
  close(): Promise<void>;
}

// echo: writes back what it reads; sink: only records.
async function startServer(echo: boolean): Promise<TestServer> {
  const conns: End[] = [];
  const server = net.createServer((s) => {
    const e = watch(s);
    s.setNoDelay(true);
    conns.push(e);
    if (echo) s.on("data", (b: Buffer) => s.write(b));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address() as net.AddressInfo;
  return {
    port: addr.port,
    conns,
    close: () => {
      for (const c of conns) c.socket.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const clients: End[] = [];
// allowHalfOpen false: the client closes as soon as the proxy's FIN arrives (as ZooKeeper clients do).
async function connect(p: FaultProxy, allowHalfOpen = false): Promise<End> {
  const s = net.connect({ host: "127.0.0.1", port: p.port, allowHalfOpen });
  s.setNoDelay(true);
  const e = watch(s);
  clients.push(e);
  await new Promise<void>((resolve, reject) => {
    s.once("connect", resolve);
    s.once("error", reject);
  });
  return e;
}

// Connects through the proxy and returns both ends once the server has accepted.
async function pair(p: FaultProxy, server: TestServer, allowHalfOpen = false): Promise<{ c: End; s: End }> {
  const before = server.conns.length;
  const c = await connect(p, allowHalfOpen);
  await until("server accepted", () => server.conns.length > before);
  return { c, s: server.conns[before] };
}

// A fake ZooKeeper session: a ConnectRequest-sized first frame, then request frames.
function frame(payload: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeInt32BE(payload.length);
  return Buffer.concat([len, payload]);
}
function request(xid: number, type: number): Buffer {
  const p = Buffer.alloc(20);
  p.writeInt32BE(xid, 0);
  p.writeInt32BE(type, 4);
  p.writeInt32BE(-101, 12); // read as ReplyHeader.err when echoed back
  return frame(p);
}
const CONNECT = frame(Buffer.alloc(45, 7));

describe("fault proxy", () => {
  let echo: TestServer;
  let sink: TestServer;
  let proxy: FaultProxy;

  beforeAll(async () => {
    echo = await startServer(true);
    sink = await startServer(false);
  });
  afterAll(async () => {
    for (const c of clients) c.socket.destroy();
    await echo.close();
    await sink.close();
  });

  async function fresh(target: TestServer): Promise<FaultProxy> {
    if (proxy) await proxy.close();
    proxy = await startFaultProxy("127.0.0.1", target.port);
    return proxy;
  }

  it("forwards both ways and counts bytes", async () => {
    const p = await fresh(echo);
    assert.equal(p.connectString, `127.0.0.1:${p.port}`);
    const before = echo.conns.length;
    const c = await connect(p);
    c.socket.write("hello");
    await until("echo", () => c.data.toString() === "hello");
    assert.deepEqual(p.bytes(), { up: 5, down: 5 });
    assert.equal(p.connections, 1);
    assert.equal(echo.conns.length, before + 1);
    c.socket.end();
    await until("client closed", () => c.closed && p.connections === 0);
    await until("server side closed", () => echo.conns[before].closed);
  });

  it("cut closes client and server sides and still accepts new connections", async () => {
    const p = await fresh(echo);
    const before = echo.conns.length;
    const c = await connect(p);
    c.socket.write("x");
    await until("echo", () => c.data.length === 1);
    p.cut();
    await until("client closed", () => c.closed);
    await until("server side closed", () => echo.conns[before].closed);
    assert.equal(p.connections, 0);
    const d = await connect(p);
    d.socket.write("y");
    await until("echo after cut", () => d.data.toString() === "y");
  });

  it("reset closes the client with a TCP RST where the runtime supports it", async () => {
    const p = await fresh(echo);
    const c = await connect(p);
    c.socket.write("x");
    await until("echo", () => c.data.length === 1);
    p.reset();
    await until("client closed", () => c.closed);
    assert.equal(c.error, "ECONNRESET"); // Node, Bun and Deno all have resetAndDestroy
  });

  it("blackhole holds data both ways and parks new connections, then releases them", async () => {
    const p = await fresh(echo);
    const a = await connect(p);
    a.socket.write("1");
    await until("echo", () => a.data.toString() === "1");
    const serverConns = echo.conns.length;
    p.blackhole(true);
    a.socket.write("2");
    const b = await connect(p);
    b.socket.write("b");
    // Held, not lost: a quarter second of nothing arriving at either end (released below).
    await never("data through a blackhole", () => a.data.toString() !== "1" || (echo.conns.at(-1)?.data.toString() ?? "") !== "1" || b.data.length > 0, 250);
    assert.equal(a.data.toString(), "1");
    assert.equal(echo.conns.at(-1)?.data.toString(), "1");
    assert.equal(b.data.length, 0);
    assert.equal(echo.conns.length, serverConns, "no upstream connection while blackholed");
    assert.equal(a.closed || b.closed, false);
    assert.equal(p.connections, 2);
    p.blackhole(false);
    await until("held data delivered", () => a.data.toString() === "12" && b.data.toString() === "b");
    assert.equal(echo.conns.length, serverConns + 1);
  });

  it("delay delays each direction and keeps order", async () => {
    const p = await fresh(echo);
    const c = await connect(p);
    p.delay(150);
    const t0 = performance.now();
    c.socket.write("a");
    await hold(20); // three separate writes, each delayed on its own
    c.socket.write("b");
    await hold(20);
    c.socket.write("c");
    await until("echo", () => c.data.length === 3);
    const rtt = performance.now() - t0;
    assert.equal(c.data.toString(), "abc");
    assert.ok(rtt >= 290, `round trip ${rtt} ms should include 2 × 150 ms`);
    p.delay(0);
    const t1 = performance.now();
    c.socket.write("d");
    await until("echo", () => c.data.length === 4);
    assert.ok(performance.now() - t1 < 100);
  });

  it("drip forwards one byte per write", async () => {
    const p = await fresh(sink);
    const { c, s } = await pair(p, sink);
    p.drip(true);
    const payload = Buffer.alloc(64, 0x61);
    c.socket.write(payload);
    s.socket.write(payload);
    await until("all bytes", () => s.data.length === 64 && c.data.length === 64);
    assert.ok(s.chunks >= 32, `server saw ${s.chunks} chunks`);
    assert.ok(c.chunks >= 32, `client saw ${c.chunks} chunks`);
  });

  it("halfClose sends FIN to the client but keeps reading from it", async () => {
    const p = await fresh(sink);
    const { c, s } = await pair(p, sink, true);
    p.halfClose();
    await until("client end", () => c.ended);
    assert.equal(c.closed, false);
    c.socket.write("more");
    await until("server got data", () => s.data.toString() === "more");
    assert.equal(p.connections, 1);
  });

  it("refuse closes new connections at once without reaching the server", async () => {
    const p = await fresh(echo);
    const before = echo.conns.length;
    p.refuse(true);
    const c = await connect(p);
    await until("client closed", () => c.closed);
    assert.equal(c.data.length, 0);
    assert.equal(echo.conns.length, before);
    p.refuse(false);
    const d = await connect(p);
    d.socket.write("ok");
    await until("echo", () => d.data.toString() === "ok");
  });

  it("setTarget retargets new connections only", async () => {
    const p = await fresh(echo);
    const a = await connect(p);
    p.setTarget("127.0.0.1", sink.port);
    const before = sink.conns.length;
    const b = await connect(p);
    b.socket.write("to-sink");
    a.socket.write("to-echo");
    await until("sink got it", () => sink.conns.length === before + 1 && sink.conns[before].data.toString() === "to-sink");
    await until("echo still serves a", () => a.data.toString() === "to-echo");
  });

  it("closes the client when the target refuses", async () => {
    const gone = net.createServer();
    await new Promise<void>((r) => gone.listen(0, "127.0.0.1", r));
    const port = (gone.address() as net.AddressInfo).port;
    await new Promise<void>((r) => gone.close(() => r()));
    const p = await fresh(echo);
    p.setTarget("127.0.0.1", port);
    const c = await connect(p);
    await until("client closed", () => c.closed);
    assert.equal(p.connections, 0);
  });

  it("onConnection reports each accepted connection", async () => {
    const ids: number[] = [];
    const p = await startFaultProxy("127.0.0.1", echo.port, { onConnection: (id) => ids.push(id) });
    await connect(p);
    await connect(p);
    await until("two ids", () => ids.length === 2);
    assert.deepEqual(ids, [1, 2]);
    await p.close();
  });

  it("cutAfterClientBytes forwards exactly n more bytes, then cuts", async () => {
    const p = await fresh(sink);
    const { c, s } = await pair(p, sink);
    c.socket.write("0123");
    await until("first bytes", () => s.data.toString() === "0123");
    const fired = p.cutAfterClientBytes(10);
    c.socket.write("abcdefghijklmnopqrstuvwxyz");
    await fired;
    await until("client closed", () => c.closed);
    await until("server side closed", () => s.closed);
    assert.equal(s.data.toString(), "0123abcdefghij");
  });

  it("cutAfterRequest forward: true delivers the frame, hides the reply, reports the server's err", async () => {
    const p = await fresh(echo);
    const { c, s } = await pair(p, echo);
    const fired = p.cutAfterRequest(1, { forward: true });
    c.socket.write(Buffer.concat([CONNECT, request(1, 4), request(2, 1), request(3, 4)]));
    const cut = await fired;
    assert.deepEqual(cut, { fired: true, xid: 2, serverErr: -101 });
    assert.deepEqual(s.data, Buffer.concat([CONNECT, request(1, 4), request(2, 1)]));
    await until("client closed", () => c.closed);
    assert.ok(c.data.length < CONNECT.length + 2 * request(0, 0).length, "client never sees the reply");
    await until("server side closed", () => s.closed);
  });

  it("cutAfterRequest forward: false stops right before the frame, even when split or dripped", async () => {
    const p = await fresh(sink);
    p.drip(true); // the frame header arrives byte by byte: none of it may leak
    const { c, s } = await pair(p, sink);
    const fired = p.cutAfterRequest(1, { forward: false });
    const before = Buffer.concat([CONNECT, request(1, 4)]);
    const create = request(2, 1);
    // The create's length and half its header come first: the proxy cannot know yet.
    c.socket.write(Buffer.concat([before, create.subarray(0, 7)]));
    await until("earlier frames forwarded", () => s.data.length >= before.length);
    await never("the partial header leaking", () => s.data.length !== before.length, 50);
    c.socket.write(Buffer.concat([create.subarray(7), request(3, 4)]));
    assert.deepEqual(await fired, { fired: true, xid: 2, serverErr: null });
    await until("client closed", () => c.closed);
    await until("server side ended", () => s.ended);
    assert.deepEqual(s.data, before);
  });

  it("cutAfterRequest forward: true waits for a frame split across writes", async () => {
    const p = await fresh(echo);
    const { c, s } = await pair(p, echo);
    const fired = p.cutAfterRequest(5, { forward: true });
    const all = Buffer.concat([CONNECT, request(7, 5), request(8, 4)]);
    const split = CONNECT.length + 15;
    c.socket.write(all.subarray(0, split));
    await until("first part forwarded", () => s.data.length === split);
    assert.equal(c.closed, false);
    c.socket.write(all.subarray(split));
    assert.deepEqual(await fired, { fired: true, xid: 7, serverErr: -101 });
    assert.deepEqual(s.data, Buffer.concat([CONNECT, request(7, 5)]));
  });

  it("ignores non-ZooKeeper streams (four-letter words) for request cuts", async () => {
    const p = await fresh(echo);
    const fired = p.cutAfterRequest(1, { forward: true });
    const c = await connect(p);
    c.socket.write("ruok" + "x".repeat(40));
    await until("echo", () => c.data.length === 44);
    assert.equal(c.closed, false);
    await p.close();
    assert.equal((await fired).fired, false);
  });

  it("close ends every connection and resolves", async () => {
    const p = await fresh(echo);
    const { c, s } = await pair(p, echo);
    await p.close();
    await until("client closed", () => c.closed);
    await until("server side closed", () => s.closed);
    await assert.rejects(connect(p));
  });
});
