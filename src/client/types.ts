// Public types of the client (reference: `npm run docs`): session states, events, options, op results.
import type { ACL, Id, Stat } from "../protocol/records.ts";
import type { ConnectionOptions } from "node:tls";
import type { CallOptions } from "./abort.ts";
import type { Clock } from "./clock.ts";
import type { Transport } from "./transport.ts";
import type { CreateMode, ErrorCode, EventType, KeeperState } from "../protocol/constants.ts";

export type { ACL, Id, Stat };

/**
 * The client's session state, as the `"state"` event reports it: `connecting` until the first session,
 * `connected`/`connectedReadOnly`, `disconnected` while reconnecting; `expired`, `authFailed` and `closed` are final.
 */
export type SessionState =
  | "connecting"
  | "connected"
  | "connectedReadOnly"
  | "disconnected"
  | "expired"
  | "authFailed"
  | "closed";

/** The name of an `EventType` value, e.g. "NodeDataChanged" (`WatchedEvent.typeName`). */
export type EventTypeName = keyof typeof EventType;

/** The name of a `KeeperState` value, e.g. "SyncConnected" (`WatchedEvent.stateName`). */
export type KeeperStateName = keyof typeof KeeperState;

/**
 * What a watcher receives: a node event, or a session event (`type` EventType.None, `path` null). A plain
 * object, so it prints readably: `{ type: 3, typeName: 'NodeDataChanged', state: 3, stateName: 'SyncConnected', path: '/a', zxid: undefined }`.
 */
export interface WatchedEvent {
  /** EventType: -1 for session events, 1..7 for node events. */
  type: EventType;
  /** The name of `type`: "None" for session events, "NodeCreated" ... "PersistentWatchRemoved" for node events. */
  typeName: EventTypeName;
  /** KeeperState. */
  state: KeeperState;
  /** The name of `state`, e.g. "SyncConnected", "Disconnected", "Expired", "Closed". */
  stateName: KeeperStateName;
  /** The node's path with the chroot removed; null for session events. */
  path: string | null;
  /**
   * The zxid of the change (3.9+ servers). undefined where the server sends -1: 3.4-3.8, session
   * events, the catch-up events of a reconnect, and the client's own *WatchRemoved events.
   */
  zxid: bigint | undefined;
}

/** A one-shot or persistent watch callback; exceptions it throws are logged and isolated from other watchers. */
export type Watcher = (event: WatchedEvent) => void;

/** Where the client logs (`console` fits); silent by default. Secrets are never logged. */
export interface Logger {
  /** Protocol-level detail: dials, reconnects, watch re-registration. */
  debug(message: string, ...args: unknown[]): void;
  /** Session milestones. */
  info(message: string, ...args: unknown[]): void;
  /** Recoverable trouble. */
  warn(message: string, ...args: unknown[]): void;
  /** A listener or watcher threw, or something failed for good. */
  error(message: string, ...args: unknown[]): void;
}

/** Credentials for `addAuthInfo` or `ConnectOptions.auth`, resent after every reconnect. */
export interface AuthInfo {
  /** The auth scheme, e.g. "digest". */
  scheme: string;
  /** The scheme's credential, e.g. "user:password" for digest (a string is sent as UTF-8). */
  auth: Uint8Array | string;
}

/** SASL authentication, run right after every connect (servers 3.4+ with a SASL `authProvider`). */
export type SaslOptions = SaslDigestMd5Options | SaslGssapiOptions;

/** SASL DIGEST-MD5: a user and password of the server's JAAS `Server` section. */
export interface SaslDigestMd5Options {
  /** The mechanism: DIGEST-MD5. */
  mechanism: "DIGEST-MD5";
  /** The user, as in the server's JAAS `user_<name>` entry. */
  username: string;
  /** The password; kept in memory for reconnects, never logged. */
  password: string;
  /** Server name in the digest-uri; ZooKeeper's default is "zk-sasl-md5". */
  serverName?: string;
}

/**
 * SASL GSSAPI (Kerberos 5): with a keytab the client gets and renews its own tickets; with only a ccache
 * (written by kinit) it uses the TGT there and, once that has expired, fails saying to run kinit.
 */
export interface SaslGssapiOptions {
  /** The mechanism: GSSAPI (Kerberos 5). */
  mechanism: "GSSAPI";
  /** The client principal, e.g. "alice@EXAMPLE.COM" (default: the keytab's first principal, or the ccache's). */
  principal?: string;
  /** An MIT keytab: a path or its bytes; kept in memory for renewals, never logged. */
  keytab?: string | Uint8Array;
  /** A FILE credentials cache written by kinit (default $KRB5CCNAME, FILE: or a plain path, else /tmp/krb5cc_<uid>). */
  ccache?: string;
  /** krb5.conf path (default $KRB5_CONFIG, else /etc/krb5.conf): default_realm, [realms] kdc, [domain_realm]. */
  krb5Config?: string;
  /** The service part of the server's principal (default "zookeeper", the Java client's zookeeper.sasl.client.username). */
  serviceName?: string;
  /** The host part of the server's principal (default: the host of the connect-string entry being connected). */
  serviceHost?: string;
}

/** Options of `ZooKeeper.connect`; every one is optional. */
export interface ConnectOptions {
  /** Session timeout asked for, ms (default 30000); the server clamps it. */
  sessionTimeout?: number;
  /**
   * Time allowed for the first session, ms (default 15000, as Curator and kazoo). Refused or unresolvable hosts are
   * tried again until then (a server that is starting refuses for a while); the error then says what every host answered.
   */
  connectTimeout?: number;
  /** Accept a read-only session from a server that lost its quorum. */
  readOnly?: boolean;
  /** Credentials sent right after every (re)connect. */
  auth?: AuthInfo[];
  /** true, or node:tls connect options, for a secure client port. */
  tls?: boolean | ConnectionOptions;
  /** SASL credentials (DIGEST-MD5 or GSSAPI); `connect()` rejects with AUTHFAILED when the login is refused. */
  sasl?: SaslOptions;
  /** Resume an existing session. */
  sessionId?: bigint;
  /** The password of the session to resume (`zk.sessionPassword` of the old client). */
  sessionPassword?: Uint8Array;
  /** Largest frame accepted from the server and sent to it (jute.maxbuffer), bytes. */
  maxBufferSize?: number;
  /** Where the client logs; silent by default. */
  logger?: Logger;
  /** Declare the session expired after 4/3 of the negotiated timeout without a server (as the Java client 3.9.3+ does). Default true. */
  clientSideExpiry?: boolean;
  /**
   * How to reach a server: `connect(target, handlers, { tls, timeoutMs })` resolving with a duplex byte stream
   * (default `defaultTransport`: node:net, or node:tls when `tls` is set). For a SOCKS or HTTP CONNECT proxy,
   * `Deno.connect`, or a test double. README "Custom transports and clocks".
   */
  transport?: Transport;
  /**
   * Timers and "now" for the client's own timing: read timeout, pings, client-side expiry, stall detection,
   * reconnect backoff, `lastHeardAt` and the lease (default `systemClock`: performance.now() and global timers).
   */
  clock?: Clock;
}

export type { CallOptions };

/** Options of `create`, `createWithStat` and `Op.create`; `signal` as every call (CallOptions). */
export interface CreateOptions extends CallOptions {
  /** The node's `CreateMode` (default PERSISTENT); TTL modes need `ttl`, CONTAINER and TTL need server 3.5.3+. */
  mode?: CreateMode;
  /** The node's ACL (default `Ids.OPEN_ACL_UNSAFE`); an empty or malformed list rejects with INVALIDACL. */
  acl?: ACL[];
  /** ms, for the TTL modes. */
  ttl?: number;
  /** Create missing ancestors first: containers where the server has them, else persistent, with `acl`. */
  createParents?: boolean;
}

/** The outcome of one op of a `multi`, in the order of the ops. */
export type OpResult =
  | {
      /** A create succeeded. */
      type: "create";
      /** The created path. */
      path: string;
      /** The new node's Stat (servers 3.9+ answer it for a create inside multi; 3.8 does not). */
      stat?: Stat;
    }
  | {
      /** A delete succeeded. */
      type: "delete";
    }
  | {
      /** A setData succeeded. */
      type: "setData";
      /** The node's new Stat. */
      stat: Stat;
    }
  | {
      /** A check succeeded. */
      type: "check";
    }
  | {
      /** This op failed (or was rolled back because another failed). */
      type: "error";
      /** Its code: the failing op's own, OK or RUNTIMEINCONSISTENCY for the others. */
      code: ErrorCode;
    };

/** Node data as callers give it: bytes, a string (sent as UTF-8), or null for none. */
export type Data = Uint8Array | string | null;
