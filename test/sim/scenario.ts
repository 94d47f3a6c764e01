// One scenario on the public API only, run against the model (model-vs-server.test.ts, simulated
// time) and a real server: both must produce the same outcome log. Values that differ by nature
// (zxids, times, session ids) are logged as relations, never raw.
import { AddWatchMode, CreateMode, Op, ZooKeeper, type WatchedEvent } from "../../src/index.ts";

export type Connect = () => Promise<ZooKeeper>;

const codeOf = (e: unknown): string => `error ${(e as { code?: number }).code ?? (e as Error).message}`;

/**
 * A scenario's outcome log: `step` runs one call and logs its value (by `format`) or its error code;
 * `onEvent(tag)` is a watcher logging into `seen` (b's events and replies, in the order b saw them);
 * `nextEvent()` resolves at the next one.
 */
export function outcomeLog(root: string, format: (v: unknown) => string) {
  const log: string[] = [];
  const seen: string[] = [];
  const waiters: Array<() => void> = [];
  const onEvent = (tag: string) => (e: WatchedEvent): void => {
    seen.push(`${tag} event ${e.type} ${e.path?.replace(root, "R")}`);
    waiters.splice(0).forEach((w) => w());
  };
  const nextEvent = (): Promise<void> => new Promise((r) => waiters.push(r));
  const step = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
    if (process.env.SIM_SHOW) console.log(`step ${what}`);
    try {
      log.push(`${what}: ${format(await fn())}`);
    } catch (e) {
      log.push(`${what}: ${codeOf(e)}`);
    }
  };
  return { log, seen, onEvent, nextEvent, step };
}

export async function scenario(connect: Connect, root: string): Promise<string[]> {
  const { log, seen, onEvent, nextEvent, step } = outcomeLog(root, (v) => (typeof v === "string" ? v.replace(root, "R") : JSON.stringify(v ?? null)));
  const a = await connect();
  const b = await connect();
  try {
    await step("create root", () => a.create(root));
    await step("create p", () => a.create(`${root}/p`, "x"));
    await step("getData p", async () => {
      const { data, stat } = await a.getData(`${root}/p`);
      return [new TextDecoder().decode(data!), stat.version, stat.dataLength, stat.numChildren, stat.czxid === stat.mzxid, stat.ephemeralOwner === 0n];
    });
    await step("setData p v0", async () => (await a.setData(`${root}/p`, "yy", 0)).version);
    await step("setData p v0 again", async () => (await a.setData(`${root}/p`, "zz", 0)).version);
    await step("seq 1", () => a.create(`${root}/s-`, "", { mode: CreateMode.EPHEMERAL_SEQUENTIAL }));
    await step("seq 2", () => a.create(`${root}/s-`, "", { mode: CreateMode.EPHEMERAL_SEQUENTIAL }));
    await step("ephemeral owner", async () => (await a.exists(`${root}/s-0000000001`))?.ephemeralOwner === a.sessionId);
    await step("child of ephemeral", () => a.create(`${root}/s-0000000001/x`));
    await step("root stat", async () => {
      const s = (await a.exists(root))!;
      return [s.cversion, s.numChildren, s.pzxid > s.czxid];
    });
    await step("children", async () => (await a.getChildren(root)).sort());
    // One-shot watches: exists on a missing node, then children of root.
    await step("b exists q", async () => (await b.exists(`${root}/q`, onEvent("exists"))) === null);
    let ev = nextEvent();
    await step("create q", () => a.create(`${root}/q`));
    await ev;
    await step("b children", async () => (await b.getChildren(root, onEvent("child"))).length);
    ev = nextEvent();
    await step("delete q", () => a.delete(`${root}/q`));
    await ev;
    await step("delete missing", () => a.delete(`${root}/q`));
    await step("delete p with child", async () => {
      await a.create(`${root}/p/c`);
      return a.delete(`${root}/p`);
    });
    // Ordering: b's read after a's write sees the event first.
    await step("b getData p", async () => (await b.getData(`${root}/p`, onEvent("data"))).stat.version);
    await step("setData p", async () => (await a.setData(`${root}/p`, "w")).version);
    seen.push(`read version ${(await b.getData(`${root}/p`)).stat.version}`);
    // Persistent recursive watch: data and create events below, never NodeChildrenChanged.
    await step("b addWatch", () => b.addWatch(`${root}/p`, AddWatchMode.PERSISTENT_RECURSIVE, onEvent("rec")));
    ev = nextEvent();
    await step("create p/d", () => a.create(`${root}/p/d`));
    await ev;
    ev = nextEvent();
    await step("setData p/d", async () => (await a.setData(`${root}/p/d`, "1")).version);
    await ev;
    // Atomic multi: the failing op rolls everything back.
    await step("multi fails", () => a.multi([Op.create(`${root}/m`), Op.delete(`${root}/nope`)]));
    await step("m after failed multi", async () => (await a.exists(`${root}/m`)) === null);
    await step("multi ok", async () => (await a.transaction().create(`${root}/m`).setData(`${root}/p`, "v").check(`${root}/p`, 3).commit()).map((r) => r.type));
    // Ephemerals go with the session: b watches s-0000000001, a closes.
    await step("b watch seq", async () => (await b.exists(`${root}/s-0000000001`, onEvent("eph"))) !== null);
    ev = nextEvent();
    await a.close();
    await ev;
    await step("children after close", async () => (await b.getChildren(root)).sort());
    log.push(...seen);
  } finally {
    await a.close();
    await b.close();
  }
  return log;
}
