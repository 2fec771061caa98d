/**
 * A first-in-first-out queue with O(1) push and shift. `Array.prototype.shift` is O(n), and the
 * open-loop generator may queue hundreds of thousands of requests when the target stalls.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = emptyGeneric();
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The item `offset` places from the front, without removing it. */
  peek(offset = 0): T | undefined {
    return this.items[this.head + offset];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    // Compact once the consumed prefix dominates, so memory stays proportional to the backlog.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/**
 * An empty array whose elements are already of V8's generic kind. `shift` stores `undefined`, which
 * turns an array of small integers (the generator's queues of request indices) into one of any
 * values; a new queue starting as integers again made the generator's optimised `peek`, `shift`
 * and `oldestInFlight` meet an array of another map at each run's start and be thrown away
 * (`--trace-deopt`: "wrong map"). Kinds only ever widen, so this one stays generic.
 */
function emptyGeneric<T>(): (T | undefined)[] {
  const items: (T | undefined)[] = [undefined];
  items.pop();
  return items;
}
