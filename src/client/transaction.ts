// A builder over multi(): collect ops, then commit them atomically.
import { Op } from "./op.ts";
import type { CreateOptions, Data, OpResult } from "./types.ts";

export class Transaction {
  private readonly ops: Op[] = [];
  private readonly run: (ops: Op[]) => Promise<OpResult[]>;

  constructor(run: (ops: Op[]) => Promise<OpResult[]>) {
    this.run = run;
  }

  create(path: string, data?: Data, options?: CreateOptions): this {
    this.ops.push(Op.create(path, data, options));
    return this;
  }

  delete(path: string, version?: number): this {
    this.ops.push(Op.delete(path, version));
    return this;
  }

  setData(path: string, data: Data, version?: number): this {
    this.ops.push(Op.setData(path, data, version));
    return this;
  }

  check(path: string, version: number): this {
    this.ops.push(Op.check(path, version));
    return this;
  }

  /** The ops collected so far. */
  get operations(): readonly Op[] {
    return this.ops;
  }

  commit(): Promise<OpResult[]> {
    return this.run([...this.ops]);
  }
}
