// Free loopback ports for test servers. Ports are drawn below the kernel's ephemeral range so that
// outgoing client sockets never sit on a port a (re)started server wants; each is checked by binding it.
import { createServer } from "node:net";

const handedOut = new Set<number>();
const LOW = 10_000;
const HIGH = 32_000; // Linux ephemeral ports start at 32768

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries++) {
    if (tries > 1000) throw new Error(`could not find ${count} free ports on 127.0.0.1`);
    const p = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(p) || !(await canBind(p))) continue;
    handedOut.add(p);
    ports.push(p);
  }
  return ports;
}
