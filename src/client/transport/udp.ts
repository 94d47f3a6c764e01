// UDP for the Kerberos client's KDC exchange (the client's only UDP): a socket connected to one KDC, so
// that an ICMP refusal fails at once. The Kerberos layer (src/kerberos/kdc.ts) does the timeouts and
// retries; this file only opens, sends and closes. Loaded with the Kerberos code, by the first GSSAPI login.
import * as dgram from "node:dgram";
import * as net from "node:net";
import type { DatagramOpener } from "../../kerberos/kdc.ts";

/** A node:dgram socket connected to `target` (udp6 for an IPv6 literal); sends wait for the connect. */
export const openDatagram: DatagramOpener = (target, handlers) => {
  const socket = dgram.createSocket(net.isIP(target.host) === 6 ? "udp6" : "udp4");
  let queued: Uint8Array[] | null = [];
  const sendNow = (datagram: Uint8Array): void => {
    socket.send(datagram, (e) => {
      if (e) handlers.onError(e);
    });
  };
  socket.on("error", (e: Error) => handlers.onError(e));
  socket.on("message", (msg: Uint8Array) => handlers.onMessage(msg));
  socket.connect(target.port, target.host, () => {
    const q = queued ?? [];
    queued = null;
    for (const d of q) sendNow(d);
  });
  return {
    send(datagram: Uint8Array): void {
      if (queued !== null) queued.push(datagram);
      else sendNow(datagram);
    },
    close(): void {
      try {
        socket.close();
      } catch {
        // already closed
      }
    },
  };
};
