/**
 * A gateway's connection slots: at most `size` holders at once; the others wait in arrival order
 * (first in, first out), so one slow holder stalls every waiter behind it — head-of-line blocking.
 * A waiter can give up (the client cancelled or left); a holder's release passes its slot to the
 * next waiter at once.
 */

export interface SlotWait {
  /** Resolves when the slot is held; never rejects. Immediate when a slot was free. */
  ready: Promise<void>;
  /** A slot was free on arrival: the caller waited for nobody. */
  immediate: boolean;
  /** Gives up the wait, or the slot once held. Idempotent. */
  release(): void;
}

interface Waiter {
  grant: () => void;
  state: 'waiting' | 'holding' | 'done';
}

export class SlotPool {
  private holders = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;

  constructor(readonly size: number) {}

  /** Calls waiting for a slot now. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  acquire(): SlotWait {
    const waiter: Waiter = { grant: () => undefined, state: 'waiting' };
    const release = (): void => {
      if (waiter.state === 'done') return;
      const held = waiter.state === 'holding';
      waiter.state = 'done';
      if (held) {
        this.holders -= 1;
        this.next();
      }
    };
    if (this.holders < this.size && this.waiting === 0) {
      this.holders += 1;
      waiter.state = 'holding';
      return { ready: Promise.resolve(), immediate: true, release };
    }
    const ready = new Promise<void>((resolve) => {
      waiter.grant = resolve;
    });
    this.queue.push(waiter);
    return { ready, immediate: false, release };
  }

  /** Hands free slots to the oldest waiters still waiting (those who gave up are skipped). */
  private next(): void {
    while (this.holders < this.size && this.head < this.queue.length) {
      const waiter = this.queue[this.head++]!;
      if (waiter.state !== 'waiting') continue;
      waiter.state = 'holding';
      this.holders += 1;
      waiter.grant();
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head); // drop the served prefix now and then, not on every release
      this.head = 0;
    }
  }
}
