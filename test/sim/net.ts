// The simulated transport: a Dialer whose Links carry bytes to the model through the scheduler, in
// order per direction, with seeded latency. Faults: cut (both ends see a close), cut at a frame
// boundary of a client's next connections (the server's first K frames reach the client, then a FIN;
// nothing more flows either way), blackhole (bytes and dials are held; held bytes flow again when it
// lifts, like TCP retransmission), delay, server restart (connections drop, dials refused while down).
import type { ServerMemory } from "../../src/client/session/features.ts";
import type { Dialer, Link } from "../../src/client/transport/transport.ts";
import type { ZkModel } from "./model.ts";
import type { Sched } from "./sched.ts";

interface Pipe {
  client: string;
  up: boolean;
  toServerAt: number;
  toClientAt: number;
  held: Array<() => void>;
  /** Server frames still to reach the client before the link is cut (cutAfter), or Infinity. */
  framesLeft: number;
  server: { onData(c: Uint8Array): void; onClose(): void } | null;
  clientClose: (e?: Error) => void;
}

export class SimNet {
  private readonly pipes = new Set<Pipe>();
  /** Per client: K for each of its next connections (cutAfter), in dial order. */
  private readonly armed = new Map<string, number[]>();
  private blackholeUntil = new Map<string, number>();
  private extraDelay = 0;
  dials = 0;
  private readonly s: Sched;
  private readonly model: ZkModel;

  constructor(s: Sched, model: ZkModel) {
    this.s = s;
    this.model = model;
  }

  private latency(): number {
    return 1 + Math.floor(this.s.random() * 4) + this.extraDelay;
  }

  private blackholed(client: string): boolean {
    return (this.blackholeUntil.get(client) ?? -1) > this.s.now;
  }

  /** What the servers of this network answered the clients' feature probes last time: shared by every session of the seed, as by every session of one process on the default transport, and by nothing outside the seed. */
  readonly servers: ServerMemory = new Map();

  /** A Dialer for one client process (its deliveries belong to that actor). */
  dialer(client: string): Dialer {
    return (target, handlers, opts) =>
      new Promise<Link>((resolve, reject) => {
        this.dials++;
        const lat = this.latency();
        if (this.blackholed(client)) {
          this.s.at(opts.timeoutMs, client, () => reject(new Error(`connect to ${target.host}:${target.port} timed out after ${opts.timeoutMs} ms`)));
          return;
        }
        this.s.at(lat, client, () => {
          if (!this.model.up) return reject(Object.assign(new Error(`connect ECONNREFUSED ${target.host}:${target.port}`), { code: "ECONNREFUSED" }));
          const framesLeft = this.armed.get(client)?.shift() ?? Number.POSITIVE_INFINITY;
          const p: Pipe = { client, up: true, toServerAt: 0, toClientAt: 0, held: [], framesLeft, server: null, clientClose: (e) => handlers.onClose(e) };
          p.server = this.model.accept({
            send: (frame) => this.fromServer(p, () => handlers.onData(frame)),
            close: () => this.closeFromServer(p),
          });
          this.pipes.add(p);
          resolve({
            write: (bytes) => {
              const copy = bytes.slice();
              this.toServer(p, () => {
                if (p.framesLeft > 0) p.server?.onData(copy); // not after a cut at a frame boundary
              });
              return true;
            },
            close: () => {
              if (!p.up) return;
              p.up = false;
              this.pipes.delete(p);
              this.s.at(this.latency(), "server", () => p.server?.onClose());
            },
            remote: `${target.host}:${target.port}`,
          });
        });
      });
  }

  private deliver(p: Pipe, dir: "toServerAt" | "toClientAt", actor: string, fn: () => void): void {
    if (!p.up) return;
    if (this.blackholed(p.client)) {
      p.held.push(() => this.deliver(p, dir, actor, fn));
      return;
    }
    const at = Math.max(p[dir], this.s.now + this.latency());
    p[dir] = at;
    this.s.at(
      at - this.s.now,
      actor,
      () => {
        if (!p.up) return false; // the socket is closed: no callback of the process runs
        fn();
      },
      true,
    );
  }

  private toServer(p: Pipe, fn: () => void): void {
    this.deliver(p, "toServerAt", "server", fn);
  }
  private toClient(p: Pipe, fn: () => void): void {
    this.deliver(p, "toClientAt", p.client, fn);
  }

  /** A server frame: on its way to the client, unless the link was cut at a frame boundary before it. */
  private fromServer(p: Pipe, fn: () => void): void {
    if (p.framesLeft <= 0) return;
    this.toClient(p, fn);
    if (--p.framesLeft > 0) return;
    // The K-th frame: the client reads it, then the FIN; the server's end closes too. Bytes either way
    // after this point are lost (as with a proxy forwarding whole frames that closes both sockets).
    this.closeFromServer(p);
    this.s.at(this.latency(), "server", () => p.server?.onClose());
  }

  private closeFromServer(p: Pipe): void {
    if (!p.up) return;
    // The FIN follows the bytes already sent.
    const at = Math.max(p.toClientAt, this.s.now + this.latency());
    p.toClientAt = at;
    this.s.at(
      at - this.s.now,
      p.client,
      () => {
        if (!p.up) return false;
        p.up = false;
        this.pipes.delete(p);
        p.clientClose();
      },
      true,
    );
  }

  // --- faults ---

  cut(client: string): void {
    for (const p of [...this.pipes]) {
      if (p.client !== client || !p.up) continue;
      p.up = false;
      this.pipes.delete(p);
      this.s.at(this.latency(), client, () => p.clientClose(new Error("read ECONNRESET")), true);
      this.s.at(this.latency(), "server", () => p.server?.onClose());
    }
  }

  /**
   * Cuts `client`'s next connections at a frame boundary: the i-th new connection (dial order) delivers
   * the server's first ks[i] frames (1 = the ConnectResponse; then on a reconnect the feature probes'
   * replies, SetWatches' catch-up notifications and reply, ...), then the client reads a FIN.
   */
  cutAfter(client: string, ks: number[]): void {
    this.armed.set(client, [...ks]);
  }

  blackhole(client: string, ms: number): void {
    this.blackholeUntil.set(client, this.s.now + ms);
    this.s.at(ms + 1, "net", () => {
      if (this.blackholed(client)) return;
      for (const p of this.pipes) if (p.client === client) for (const f of p.held.splice(0)) f();
    });
  }

  delay(ms: number, forMs: number): void {
    this.extraDelay = ms;
    this.s.at(forMs, "net", () => (this.extraDelay = 0));
  }

  restart(downMs: number): void {
    this.model.stop();
    this.s.at(downMs, "server", () => this.model.start());
  }
}
