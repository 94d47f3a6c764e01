// Public types of the client (API.md): session states, events, options, op results.
import type { ACL, Id, Stat } from "../protocol/records.ts";
import type { ConnectionOptions } from "node:tls";
import type { CreateMode, ErrorCode, EventType, KeeperState } from "../protocol/constants.ts";

export type { ACL, Id, Stat };

export type SessionState =
  | "connecting"
  | "connected"
  | "connectedReadOnly"
  | "disconnected"
  | "expired"
  | "authFailed"
  | "closed";

export interface WatchedEvent {
  /** EventType: -1 for session events, 1..7 for node events. */
  type: EventType;
  /** KeeperState. */
  state: KeeperState;
  /** The node's path with the chroot removed; null for session events. */
  path: string | null;
}

export type Watcher = (event: WatchedEvent) => void;

export interface Logger {
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string, ...args: unknown[]): void;
}

export interface AuthInfo {
  scheme: string;
  auth: Uint8Array | string;
}

export interface SaslOptions {
  mechanism: "DIGEST-MD5";
  username: string;
  password: string;
  /** Server name in the digest-uri; ZooKeeper's default is "zk-sasl-md5". */
  serverName?: string;
}

export interface ConnectOptions {
  /** Session timeout asked for, ms (default 30000); the server clamps it. */
  sessionTimeout?: number;
  /** Time allowed for the first session, ms (default 30000). */
  connectTimeout?: number;
  /** Accept a read-only session from a server that lost its quorum. */
  readOnly?: boolean;
  /** Credentials sent right after every (re)connect. */
  auth?: AuthInfo[];
  /** true, or node:tls connect options, for a secure client port. */
  tls?: boolean | ConnectionOptions;
  sasl?: SaslOptions;
  /** Resume an existing session. */
  sessionId?: bigint;
  sessionPassword?: Uint8Array;
  /** Largest frame accepted from the server and sent to it (jute.maxbuffer), bytes. */
  maxBufferSize?: number;
  logger?: Logger;
  /** Declare the session expired after 4/3 of the negotiated timeout without a server (as the Java client 3.9.3+ does). Default true. */
  clientSideExpiry?: boolean;
}

export interface CreateOptions {
  mode?: CreateMode;
  acl?: ACL[];
  /** ms, for the TTL modes. */
  ttl?: number;
}

export type OpResult =
  | { type: "create"; path: string; stat?: Stat }
  | { type: "delete" }
  | { type: "setData"; stat: Stat }
  | { type: "check" }
  | { type: "error"; code: ErrorCode };

export type Data = Uint8Array | string | null;
