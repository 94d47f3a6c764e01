// A server's TLS refusal ends the first connect at once, however the runtime words the alert and
// whenever it arrives (fake dialer: no sockets, no timers). Facts asserted: the error, and that the
// client dialled once instead of retrying or waiting out the attempt for a ConnectResponse.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { isCertificateError } from "../../src/client/transport/tls-errors.ts";
import { loadTls, TLS_FILE } from "../../src/client/transport/tls-files.ts";
import type { Dialer } from "../../src/client/transport/transport.ts";
import type { InternalOptions } from "../../src/client/zookeeper.ts";

const alert = (message: string, code?: string): Error => Object.assign(new Error(message), code ? { code } : {});

/** A dialer whose link the server refuses after the handshake: `when` says in which turn. */
function refusingDialer(err: Error, when: "sameTurn" | "later"): { dialer: Dialer; dials: () => number } {
  let dials = 0;
  const dialer: Dialer = (target, handlers) => {
    dials++;
    let closed = false;
    let refused = false;
    const refuse = (): void => {
      if (closed || refused) return;
      refused = true;
      handlers.onClose(err);
    };
    const link = {
      remote: `${target.host}:${target.port}`,
      write: (): boolean => {
        // "later": the server refuses once it has read the client's first bytes (the ConnectRequest),
        // after that write has returned.
        if (when === "later") queueMicrotask(refuse);
        return true;
      },
      close: () => void (closed = true),
    };
    if (when === "sameTurn") {
      // The runtime emits secureConnect, then error and close, before the caller's await resumes.
      return new Promise((resolve) => {
        resolve(link);
        refuse();
      });
    }
    return Promise.resolve(link);
  };
  return { dialer, dials: () => dials };
}

const cases: [string, Error][] = [
  ["Node's code", alert("sslv3 alert bad certificate", "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE")],
  ["OpenSSL 3's TLS 1.3 code", alert("tlsv13 alert certificate required", "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED")],
  ["Deno's rustls wording without a code", alert("received fatal alert: BadCertificate")],
  ["rustls's own certificate check", alert("invalid peer certificate: UnknownIssuer")],
];

describe("TLS refusal after the handshake", () => {
  for (const [name, err] of cases) {
    for (const when of ["sameTurn", "later"] as const) {
      it(`${name}, delivered ${when === "sameTurn" ? "in the handshake's turn" : "after it"}: one dial, a clear error`, async () => {
        const { dialer, dials } = refusingDialer(err, when);
        const opts: InternalOptions = { dialer, tls: true, connectTimeout: 600_000, sessionTimeout: 600_000 };
        const got = await ZooKeeper.connect("127.0.0.1:2281", opts).then(
          async (zk) => (await zk.close(), null),
          (e: unknown) => e,
        );
        assert.ok(got instanceof ZooKeeperError, String(got));
        assert.equal(got.code, ErrorCode.CONNECTIONLOSS);
        assert.ok(got.message.includes(err.message), got.message);
        assert.equal(dials(), 1);
      }, 10_000);
    }
  }

  it("classifies by code or wording, through causes, and leaves other failures retryable", () => {
    for (const [, err] of cases) assert.ok(isCertificateError(new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "lost", { cause: err })));
    assert.ok(!isCertificateError(alert("read ECONNRESET", "ECONNRESET")));
    assert.ok(!isCertificateError(alert("received fatal alert: HandshakeFailure")));
    assert.ok(!isCertificateError(new Error("server 127.0.0.1:2281 closed the connection")));
  });

  it("TLS material that cannot be had (a file, the tls function) is retryable, not a certificate refusal", async () => {
    const failures = await Promise.all([
      loadTls(() => {
        throw new Error("secret store unreachable");
      }),
      loadTls({ caFile: "/nonexistent/ca.crt" }),
    ].map((p) => p.then(() => null, (e: unknown) => e)));
    for (const e of failures) {
      assert.ok(e instanceof Error, String(e));
      assert.equal((e as { code?: unknown }).code, TLS_FILE);
      assert.ok(!isCertificateError(e), e.message);
    }
    assert.match((failures[0] as Error).message, /the tls function failed: secret store unreachable/);
    assert.match((failures[1] as Error).message, /caFile \/nonexistent\/ca\.crt could not be read \(ENOENT\)/);
  });
});
