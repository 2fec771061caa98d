/**
 * A first-in-first-out queue with O(1) push and shift. `Array.prototype.shift` is O(n), and the
 * open-loop generator may queue hundreds of thousands of requests when the target stalls.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
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
