/**
 * What one rollback plan may cost. The CLI and the library plan without limits; the previews of the audit
 * UI and of the server's rollback API pass a budget (src/operator/rollback.ts), so that a session of
 * thousands of calls or a reset across a long history answers within its time with what it found,
 * instead of holding the server.
 */

export interface RollbackBudget {
  /** True once the caller's time is spent, checked between steps: a dry run then stops (status `stopped`). */
  readonly spent: boolean;
  /** Calls a dry run may undo (a session rollback or a reset plans call after call). */
  calls?: number;
  /** Characters of patch text an outcome carries in all; files after that get no patch (`cut: true`). */
  patchChars?: number;
  /**
   * Edit distance (lines) a file's patch may search; two versions that differ more get no patch
   * (`cut: true, tooLarge: true`) instead of a diff that would take minutes.
   */
  maxEditLength?: number;
}

/** Where a dry run stopped, and why. */
export interface RollbackStop {
  reason: 'time' | 'calls';
  /** Calls planned before the stop, of how many the action undoes. */
  planned: number;
  of: number;
}

export class PlanStopped extends Error {
  constructor(readonly stop: RollbackStop) {
    super(`rollback preview stopped (${stop.reason}) after ${stop.planned} of ${stop.of} calls`);
  }
}

/** A step runs at most this long before the plan yields to the event loop (other requests, I/O). */
const SLICE_MS = 10;

/**
 * The steps of one plan: each yields to the event loop when the plan has run for a time slice, and, for a
 * dry run with a budget, refuses to go on once the budget is spent. Commits are planned in full (the
 * operator saw a preview that finished), only paced.
 */
export class PlanSteps {
  private sliceStart = performance.now();
  planned = 0;
  of = 0;

  constructor(private readonly budget: RollbackBudget | undefined) {}

  get patchChars(): number {
    return this.budget?.patchChars ?? Infinity;
  }

  get maxEditLength(): number {
    return this.budget?.maxEditLength ?? Infinity;
  }

  /** The time budget is spent (a dry run's file diffs after this point are left out). */
  get spent(): boolean {
    return this.budget?.spent ?? false;
  }

  /** Before planning `count` calls: a dry run whose budget allows fewer stops here. */
  expect(count: number): void {
    this.of = count;
    const allowed = this.budget?.calls;
    if (allowed !== undefined && count > allowed) throw new PlanStopped({ reason: 'calls', planned: 0, of: count });
  }

  /** What the plan is (the title of its commit), for the outcome of a stopped dry run. */
  title = '';

  /** Yield to the event loop if this slice of work is used up. */
  async pace(): Promise<void> {
    if (performance.now() - this.sliceStart >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      this.sliceStart = performance.now();
    }
  }

  /** A step of planning: paced, and refused (PlanStopped) once a dry run's budget is spent. */
  async step(): Promise<void> {
    await this.pace();
    if (this.budget?.spent) throw new PlanStopped({ reason: 'time', planned: this.planned, of: this.of });
  }
}
