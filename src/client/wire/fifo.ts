// A FIFO with a moving head: O(1) shift without Array.prototype.shift's copying.

/** What an empty queue's drain() returns: one array for all (its callers only read it). */
const NONE: readonly never[] = [];

export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Compact once the dead prefix dominates, keeping pushes amortised O(1).
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes and returns the newest item. */
  pop(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    return this.items.pop();
  }

  /** Empties the queue and returns what it held, oldest first. */
  drain(): readonly T[] {
    if (this.head >= this.items.length) {
      // Nearly every drain (a connection's close, a session's end) finds nothing: no slice, nor array, for that.
      if (this.items.length > 0) this.items = [];
      this.head = 0;
      return NONE;
    }
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }
}
