// Loads the golden frames recorded between the real Java client and a real ZooKeeper 3.8.0 server
// (fixtures/frames/java-3.8.0.json, see its README) and pairs every reply with the request it answers.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface GoldenFrame {
  seq: number;
  /** TCP connection number; one session may span several connections (reconnects). */
  conn: number;
  scenario: string;
  dir: "c2s" | "s2c";
  label: string;
  opcode: number | null;
  xid: number | null;
  err: number | null;
  /** Notifications only: the recorder's own decoding of the WatcherEvent. */
  event?: { type: string; state: number; path: string };
  /** The whole frame, including its 4-byte length. */
  hex: string;
}

export interface GoldenFile {
  recordedWith: { sessionTimeoutRequestedMs: number; serverConfig: string[]; [k: string]: unknown };
  scenarios: string[];
  frames: GoldenFrame[];
}

export interface GoldenReply {
  frame: GoldenFrame;
  /** The request with the same conn and xid; null for ConnectResponse, notifications and pings. */
  request: GoldenFrame | null;
  kind: "connect" | "notification" | "ping" | "auth" | "reply";
}

// The committed recording; GOLDEN_FRAMES=<file> points the tests at another one (e.g. a fresh recording).
// (import.meta is cast because Deno type-checks against this repo's lib settings, which lack its url.)
export const GOLDEN_PATH = process.env.GOLDEN_FRAMES ?? fileURLToPath(new URL("../../fixtures/frames/java-3.8.0.json", (import.meta as { url: string }).url));

export function loadGolden(path = GOLDEN_PATH): GoldenFile {
  return JSON.parse(readFileSync(path, "utf8")) as GoldenFile;
}

export function bytesOf(frame: GoldenFrame): Uint8Array {
  const h = frame.hex;
  const out = new Uint8Array(h.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** The first frame of a connection in each direction is the handshake, which has no header. */
export function isHandshake(frames: readonly GoldenFrame[], f: GoldenFrame): boolean {
  return frames.find((g) => g.conn === f.conn && g.dir === f.dir) === f;
}

/** Frames of one connection and direction, in the order the peer sent them. */
export function streamOf(frames: readonly GoldenFrame[], conn: number, dir: "c2s" | "s2c"): GoldenFrame[] {
  return frames.filter((f) => f.conn === conn && f.dir === dir);
}

export function connections(frames: readonly GoldenFrame[]): number[] {
  return [...new Set(frames.map((f) => f.conn))].sort((a, b) => a - b);
}

/** Classifies each s2c frame and finds its request: same conn, same xid (xid -1 notification, -2 ping, -4 auth). */
export function pairReplies(frames: readonly GoldenFrame[]): GoldenReply[] {
  const out: GoldenReply[] = [];
  for (const f of frames) {
    if (f.dir !== "s2c") continue;
    if (isHandshake(frames, f)) {
      out.push({ frame: f, request: null, kind: "connect" });
      continue;
    }
    // The xid is the first field of the ReplyHeader; read it from the bytes, not from the label.
    const xid = parseInt(f.hex.slice(8, 16), 16) | 0;
    if (xid === -1) {
      out.push({ frame: f, request: null, kind: "notification" });
      continue;
    }
    // The latest earlier request with that xid: pings (-2) and auth (-4) repeat theirs.
    const request =
      frames.findLast((g) => g.dir === "c2s" && g.conn === f.conn && g.seq < f.seq && !isHandshake(frames, g) && (parseInt(g.hex.slice(8, 16), 16) | 0) === xid) ??
      null;
    out.push({ frame: f, request, kind: xid === -2 ? "ping" : xid === -4 ? "auth" : "reply" });
  }
  return out;
}
