/**
 * Pacing for long read-model loops (a scan of history, a blame replay, a search of the memory): a server
 * answers other requests between the steps of a heavy one.
 */

/** Let other requests (and I/O) in: long loops await this between steps. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Time slices for a long loop: `await pacer.pace()` between steps yields to the event loop once the
 * current slice has run `sliceMs`, so other requests are answered within about a slice, while a loop of
 * cheap steps does not pay a yield per step.
 */
export class Pacer {
  private sliceStart = performance.now();
  constructor(private readonly sliceMs = 10) {}

  async pace(): Promise<void> {
    if (performance.now() - this.sliceStart < this.sliceMs) return;
    await yieldToLoop();
    this.sliceStart = performance.now();
  }
}

/** A deadline for one request's work, checked between steps. */
export class WorkBudget {
  private readonly deadline: number;
  constructor(readonly millis: number, private readonly now: () => number = Date.now) {
    this.deadline = now() + millis;
  }

  get spent(): boolean {
    return this.now() >= this.deadline;
  }
}
