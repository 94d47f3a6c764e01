// The simulated transport: a Dialer whose Links carry bytes to the model through the scheduler, in
// order per direction, with seeded latency. Faults: cut (both ends see a close), blackhole (bytes and
// dials are held; held bytes flow again when it lifts, like TCP retransmission), delay, server
// restart (connections drop, dials refused while down).
import type { ServerMemory } from "../../src/client/features.ts";
import type { Dialer, Link } from "../../src/client/transport.ts";
import type { ZkModel } from "./model.ts";
import type { Sched } from "./sched.ts";

interface Pipe {
  client: string;
  up: boolean;
  toServerAt: number;
  toClientAt: number;
  held: Array<() => void>;
  server: { onData(c: Uint8Array): void; onClose(): void } | null;
  clientClose: (e?: Error) => void;
}

export class SimNet {
  private readonly pipes = new Set<Pipe>();
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
          const p: Pipe = { client, up: true, toServerAt: 0, toClientAt: 0, held: [], server: null, clientClose: (e) => handlers.onClose(e) };
          p.server = this.model.accept({
            send: (frame) => this.toClient(p, () => handlers.onData(frame)),
            close: () => this.closeFromServer(p),
          });
          this.pipes.add(p);
          resolve({
            write: (bytes) => {
              const copy = bytes.slice();
              this.toServer(p, () => p.server?.onData(copy));
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
