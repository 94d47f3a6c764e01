// Election interop through crashes: contenders of several kinds on one election path; at every
// stable point exactly one process says it leads and every process names that one as leader.
import { spawnContender, type Contender, type ContenderKind } from "./contenders.ts";
import { until } from "../support/wait.ts";

export interface ElectionRunConfig {
  connectString: string;
  path: string;
  kinds: ContenderKind[];
  protocol: "curator-selector" | "kazoo";
  sessionMs: number;
  crashes: number;
  log?: (line: string) => void;
}

export interface ElectionRecord {
  stablePoints: { leader: string; kind: ContenderKind; agreed: number; ms: number }[];
}

export async function runElection(cfg: ElectionRunConfig): Promise<ElectionRecord> {
  const all: Contender[] = [];
  const leading = new Map<Contender, boolean>();
  let serial = 0;
  const add = async (kind: ContenderKind): Promise<void> => {
    const c = await spawnContender({ kind, connectString: cfg.connectString, path: cfg.path, id: `${kind}-${serial++}`, sessionMs: cfg.sessionMs, role: "election", variant: cfg.protocol });
    const take = (l: { kind: string }): void => {
      if (l.kind === "ELECTED") leading.set(c, true);
      if (l.kind === "REVOKED") leading.set(c, false);
    };
    for (const l of c.lines) take(l); // lines that came before READY was seen
    c.onLine(take);
    all.push(c);
  };
  const stable = async (): Promise<{ leader: Contender; agreed: number }> => {
    let found: { leader: Contender; agreed: number } | null = null;
    let seen = "";
    const check = async (): Promise<boolean> => {
      const alive = all.filter((c) => c.alive);
      const leaders = alive.filter((c) => leading.get(c));
      const named = await Promise.all(alive.map((c) => c.leader().catch(() => null)));
      seen = `leading ${leaders.map((c) => c.id)}, named ${named}`;
      if (leaders.length === 1 && named.every((n) => n === leaders[0].id)) {
        // Still so after the answers came in: a stable point.
        if (alive.filter((c) => leading.get(c)).length === 1 && leading.get(leaders[0])) found = { leader: leaders[0], agreed: alive.length };
      }
      return found !== null;
    };
    await until("a stable point", check, cfg.sessionMs + 20_000, 50).catch((e: Error) => {
      throw new Error(`no stable point (${e.message}): ${seen}`);
    });
    return found!;
  };
  const out: ElectionRecord = { stablePoints: [] };
  try {
    for (const k of cfg.kinds) await add(k);
    let since = process.hrtime.bigint();
    for (let round = 0; ; round++) {
      const { leader, agreed } = await stable();
      out.stablePoints.push({ leader: leader.id, kind: leader.kind, agreed, ms: Number(process.hrtime.bigint() - since) / 1e6 });
      cfg.log?.(`stable point ${round}: ${leader.id} leads, ${agreed} agree`);
      if (round >= cfg.crashes) break;
      since = process.hrtime.bigint();
      await leader.kill("SIGKILL");
      await add(leader.kind);
    }
  } finally {
    await Promise.all(all.map((c) => c.close(5000)));
  }
  return out;
}
