// A builder over multi(): collect ops, then commit them atomically.
import { Op } from "./multi-ops.ts";
import type { CreateOptions, Data, OpResult } from "./types.ts";

/**
 * Ops collected by chained calls and committed atomically with one `multi` (`zk.transaction()`). `commit()`
 * rejects with the first failing op's code (its `results` hold every op's outcome) and applies nothing then.
 */
export class Transaction {
  private readonly ops: Op[] = [];
  private readonly run: (ops: Op[]) => Promise<OpResult[]>;

  /** Made by `ZooKeeper.transaction()` (or a recipe's); `run` commits the ops. */
  constructor(run: (ops: Op[]) => Promise<OpResult[]>) {
    this.run = run;
  }

  /** Adds `Op.create`. */
  create(path: string, data?: Data, options?: CreateOptions): this {
    this.ops.push(Op.create(path, data, options));
    return this;
  }

  /** Adds `Op.delete`. */
  delete(path: string, version?: number): this {
    this.ops.push(Op.delete(path, version));
    return this;
  }

  /** Adds `Op.setData`. */
  setData(path: string, data: Data, version?: number): this {
    this.ops.push(Op.setData(path, data, version));
    return this;
  }

  /** Adds `Op.check`. */
  check(path: string, version: number): this {
    this.ops.push(Op.check(path, version));
    return this;
  }

  /** The ops collected so far. */
  get operations(): readonly Op[] {
    return this.ops;
  }

  /** Runs the ops in one multi: resolves with one result per op, or rejects with a `ZooKeeperError` and applies none. */
  commit(): Promise<OpResult[]> {
    return this.run([...this.ops]);
  }
}
