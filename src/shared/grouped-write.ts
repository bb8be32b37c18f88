/**
 * Group commit for a statement many callers run with their own rows: the first caller's rows go at once,
 * and the rows of callers that come while that statement is under way go together in the next one. So an
 * idle store waits for nothing, and a busy one (a worker finishing hundreds of checks a second,
 * docs/architecture.md, Freshness) takes one statement for many callers instead of one each: on a loopback
 * connection, each statement's socket write costs the worker about as much as the work it carries.
 *
 * Each caller hears of its own rows only. Rows with the same key as a row already in the batch wait for the
 * next statement, so that a later write of a row is never applied before an earlier one. When a statement
 * of several callers fails, each caller's rows are written again alone, so that one caller's bad row fails
 * that caller only.
 */
/** A caller's rows, and how it hears of their statement. */
interface Waiting<T> { rows: T[]; resolve: () => void; reject: (err: unknown) => void }

export class GroupedWrite<T> {
  private readonly waiting: Waiting<T>[] = [];
  private writing = false;

  constructor(
    private readonly write: (rows: T[]) => Promise<void>,
    private readonly keyOf: (row: T) => string,
    /** The most rows one statement carries. */
    private readonly maxRows = 500,
  ) {}

  /** Resolves once a statement holding these rows has been written. */
  add(rows: T[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ rows, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.takeBatch();
        try {
          await this.write(batch.flatMap((c) => c.rows));
          for (const c of batch) c.resolve();
        } catch (err) {
          if (batch.length === 1) { batch[0].reject(err); continue; }
          for (const c of batch) {
            try { await this.write(c.rows); c.resolve(); } catch (own) { c.reject(own); }
          }
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** The callers of the next statement: in order, up to maxRows, none with a key already in it. */
  private takeBatch(): Waiting<T>[] {
    const batch: Waiting<T>[] = [];
    const keys = new Set<string>();
    let rows = 0;
    for (let i = 0; i < this.waiting.length;) {
      const caller = this.waiting[i];
      const own = caller.rows.map(this.keyOf);
      const fits = batch.length === 0 || (rows + caller.rows.length <= this.maxRows && !own.some((k) => keys.has(k)));
      if (!fits) {
        // Past a caller that must wait, no later caller may overtake it with a key of its own.
        for (const k of own) keys.add(k);
        i++;
        continue;
      }
      for (const k of own) keys.add(k);
      rows += caller.rows.length;
      batch.push(caller);
      this.waiting.splice(i, 1);
    }
    return batch;
  }
}
