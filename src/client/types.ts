// Public types of the client (reference: `npm run docs`): session states, events, options, op results.
import type { ACL, Id, Stat } from "../protocol/records.ts";
import type { Clock } from "./clock.ts";
import type { Transport } from "./transport/transport.ts";
import type { TlsSetting } from "./transport/tls-options.ts";
import type { CreateMode, ErrorCode, EventType, KeeperState } from "../protocol/constants.ts";

export type { ACL, Id, Stat };
export type { TlsCertificateName, TlsKey, TlsOptions, TlsPeerCertificate, TlsPfx, TlsSecureContext, TlsSetting, TlsVersion } from "./transport/tls-options.ts";

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
  /**
   * A FILE credentials cache written by kinit (default $KRB5CCNAME, FILE: or a plain path, else krb5.conf's
   * default_ccache_name, else /tmp/krb5cc_<uid>). KEYRING:, KCM: and other cache types are refused (AUTHFAILED).
   */
  ccache?: string;
  /** krb5.conf path (default $KRB5_CONFIG, else /etc/krb5.conf): default_realm, [realms] kdc, [domain_realm]. */
  krb5Config?: string;
  /** The service part of the server's principal (default "zookeeper", the Java client's zookeeper.sasl.client.username). */
  serviceName?: string;
  /**
   * The host part of the server's principal (default: the host of the connect-string entry being connected,
   * canonicalized unless `canonicalizeHostname` is false). Given, it is used as it is, for every server.
   */
  serviceHost?: string;
  /**
   * Canonicalize the host of the server being connected as the Java client does (its
   * zookeeper.sasl.client.canonicalize.hostname, default true): resolve the connect-string host to its addresses,
   * pick one for the attempt (at random as the Java client, none twice before each has had its turn; the attempt
   * dials it), that address back to a name
   * (getnameinfo), and use that name when it resolves to the same address; else the host as written. So a name with
   * several addresses logs in to each server under that server's own principal. So "127.0.0.1:2181" asks for zookeeper/localhost where /etc/hosts says so. False, as with Java: a
   * name as written, except a short name whose canonical name only lengthens it ("zk" -> "zk.example.com"); an IP
   * address still by its reverse name (Java's getHostName()); `serviceHost` or `serverPrincipal` fix the name.
   */
  canonicalizeHostname?: boolean;
  /**
   * The server's full principal (the Java client's zookeeper.server.principal), e.g.
   * "zookeeper/_HOST@EXAMPLE.COM": "_HOST" is replaced by the host of the server being connected (lower case,
   * canonicalized unless `canonicalizeHostname` is false). Without a realm: `serverRealm`'s.
   */
  serverPrincipal?: string;
  /** The server principal's realm (the Java client's zookeeper.server.realm; default: krb5.conf's [domain_realm] for the host, else the client's realm). */
  serverRealm?: string;
  /** Name resolution for host canonicalization and KDC discovery (default: the system's, through node:dns); tests inject theirs. */
  resolver?: KerberosResolver;
}

/** An SRV record, as `KerberosResolver.resolveSrv` gives it. */
export interface SrvRecord {
  /** The target host. */
  name: string;
  /** The target port. */
  port: number;
  /** Lower is tried first. */
  priority: number;
  /** Among equal priorities, the relative weight. */
  weight: number;
}

/** Name resolution for the Kerberos client; each method left out is the system's (node:dns). */
export interface KerberosResolver {
  /** The addresses of a host name (default: node:dns lookup, all families: /etc/hosts, then DNS). */
  lookup?(host: string): Promise<readonly string[]>;
  /** The name of an address (default: node:dns lookupService, i.e. getnameinfo, as Java's getCanonicalHostName). */
  reverse?(address: string, port: number): Promise<string>;
  /** The SRV records of a name such as "_kerberos._udp.EXAMPLE.COM" (default: node:dns resolveSrv); KDC discovery. */
  resolveSrv?(name: string): Promise<readonly SrvRecord[]>;
}

/** One SRV record as `ConnectOptions.srvResolver` gives it (node:dns's SrvRecord has these fields and more). */
export interface SrvTarget {
  /** The target host name. */
  name: string;
  /** The target's port. */
  port: number;
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
  /**
   * true, or `TlsOptions` (`ca`, `cert`, `key`, `servername`, ...: tls.connect's options; `caFile`, `certFile`,
   * `keyFile`: files read for each new connection), for a secure client port; or a function giving the current
   * `TlsOptions`, called for each new connection (each reconnect and each read-only probe), e.g. to load rotated
   * certificates from a secret store. A function that throws or rejects fails that attempt only (code `ERR_TLS_FILE`).
   */
  tls?: TlsSetting;
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
   * (default `defaultTransport`: a TCP socket, or TLS when `tls` is set). For a SOCKS or HTTP CONNECT proxy,
   * `Deno.connect`, or a test double. docs/sessions-and-failures.md "Custom transports and clocks".
   */
  transport?: Transport;
  /**
   * Resolves a connect string's host name to addresses, called on every connection attempt (and read-only probe),
   * so a server whose name moved is found at its new address. Default: none, and the default transport has the name
   * resolved by the system's resolver (node:dns lookup, as node:net does) on every attempt too. When given, the client
   * dials one of the addresses (at random, as the Java client), keeping the name for TLS (SNI and the certificate
   * check) and messages; a name that does not resolve (it rejects, or gives no address) fails that attempt with
   * code ENOTFOUND and the client moves on to the next host without the usual pause. IP addresses are not resolved.
   * With SASL GSSAPI (canonicalization on) the address picked also names the server's principal (docs/kerberos.md).
   */
  resolver?: (host: string) => Promise<string[]>;
  /**
   * For a `dns-srv://NAME[/chroot]` connect string (as ZooKeeper 3.10's client reads it): looks up NAME's SRV
   * records, at connect() and every `srvRefreshMs` (default node:dns `resolveSrv`). docs/client.md "DNS SRV".
   */
  srvResolver?: (name: string) => Promise<SrvTarget[]>;
  /**
   * For a `dns-srv://` connect string: ms between SRV lookups on the client's clock (default 60000, the Java
   * client's; 0: only at connect()). A changed server set is applied as `updateServerList` applies a new list.
   */
  srvRefreshMs?: number;
  /**
   * Timers and "now" for the client's own timing: read timeout, pings, client-side expiry, stall detection,
   * reconnect backoff, `lastHeardAt` and the lease (default `systemClock`: performance.now() and global timers).
   */
  clock?: Clock;
  /**
   * Follow the ensemble's membership (servers 3.5+, as Curator's EnsembleTracker): watch /zookeeper/config and
   * hand each new membership's client addresses to `updateServerList` (its rebalancing rule; the chroot stays).
   * Default true, false with a custom `transport`. It starts only when the connect string's hosts are the
   * config's client addresses; otherwise (a proxy between, other names, a static ensemble whose config names no
   * client address, a 3.4 server, NOAUTH on the config, a call of `updateServerList`) it is off, said once as
   * the `"ensemble"` event (`type: "off"`) and through `logger`. docs/client.md "Ensemble changes".
   */
  trackEnsemble?: boolean;
}

/** The last, optional argument of every operation. */
export interface CallOptions {
  /** Aborting rejects the call with `signal.reason`; a request already sent may still apply on the server. */
  signal?: AbortSignal;
}

/** Options of `getData` and `exists`: `signal` as every call (CallOptions), and `linearizable`. */
export interface ReadOptions extends CallOptions {
  /**
   * true: the answer was current at an instant between the call and its answer (a linearizable read), not merely
   * what the server this session reads from had applied (which may lag the quorum, even after `sync`). The read is
   * followed by `multi([Op.check(path, version)])`, which the leader orders (for a missing node, a check that must
   * fail NONODE), and both are sent again while the check fails because the node changed in between. Costs a
   * quorum round trip per try (bench/README.md). A `watcher` is registered by each read; the last one stands.
   */
  linearizable?: boolean;
}

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
  /** As WriteOptions.uniqueData: no other client creates this path with these very bytes. */
  uniqueData?: boolean;
}

/** What `JSON.stringify(zk)` shows of a client (`ZooKeeper.toJSON`): nothing secret. */
export interface ClientSummary {
  /** The session's state. */
  state: SessionState;
  /** The session id in hex, "0x0" before the first session. */
  sessionId: string;
  /** The server of the current connection, or null. */
  remoteAddress: string | null;
}

/** Options of `setData`: `signal` as every call (CallOptions), and `uniqueData`. */
export interface WriteOptions extends CallOptions {
  /**
   * true: no other client writes these very bytes (they carry the writer's id, a UUID, a sequence number). Then,
   * when this write's reply was lost and the same write sent again is refused, finding these bytes at the version
   * it expected + 1 proves it applied, and the call resolves. Without it that finding is reported as
   * OutcomeUnknownError: another client writing the same bytes from the same version (two counters moving 5 to 6)
   * cannot be told apart.
   */
  uniqueData?: boolean;
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

/** Which server line the connection reached: 3.4, 3.5 to 3.8 (not told apart), or 3.9 and later. */
export type ServerGeneration = "3.4" | "3.5-3.8" | "3.9+";

/** What the connected server supports (`zk.serverFeatures`); a fresh object after every new connection. */
export interface ServerFeatures {
  /** The server line the probes placed it in. */
  readonly generation: ServerGeneration;
  /** CONTAINER creates (3.5+). */
  readonly containers: boolean;
  /** TTL creates (3.5+; the server also needs extendedTypesEnabled=true). */
  readonly ttl: boolean;
  /** create2: a create answered with the node's Stat (3.5+), used by createWithStat. */
  readonly createWithStat: boolean;
  /** removeWatches / removeAllWatches on the server (3.5+). */
  readonly removeWatches: boolean;
  /** getConfig and reconfig (3.5+). */
  readonly reconfig: boolean;
  /** addWatch: persistent and recursive watches (3.6+). */
  readonly persistentWatches: boolean;
  /** multiRead (3.6+). */
  readonly multiRead: boolean;
  /** getEphemerals and getAllChildrenNumber (3.6+). */
  readonly getEphemerals: boolean;
  /** whoAmI (3.7+; assumed on 3.5-3.8). */
  readonly whoAmI: boolean;
  /** Persistent watches are removed with WatcherType Persistent/PersistentRecursive (3.9+), not Data/Any. */
  readonly persistentRemovalTypes: boolean;
  /** Notifications carry the zxid of the change (3.9+). */
  readonly eventZxid: boolean;
}
