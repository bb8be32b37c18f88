/**
 * A form that creates or rotates a secret runs once per (session, idempotency key): a reload of its
 * result page, a second press or a resent request gets the first run's result again, never a second
 * rotation (docs/architecture.md, Pages). Results are kept in this process's memory only, for a few
 * minutes, then forgotten; a press while the first is still running waits for it.
 */
export interface OnceResult<T> {
  value: T;
  /** True when this is an earlier run's result shown again. */
  repeated: boolean;
}

export class OncePerForm<T> {
  private readonly entries = new Map<string, { result: Promise<T>; expires: number }>();

  constructor(private readonly ttlMs = 10 * 60_000, private readonly maxEntries = 1000) {}

  async run(scope: string, formKey: string, fn: () => Promise<T>): Promise<OnceResult<T>> {
    const now = Date.now();
    this.forgetExpired(now);
    const key = `${scope}\u0000${formKey}`;
    const held = this.entries.get(key);
    if (held) return { value: await held.result, repeated: true };
    // The oldest entry goes first when full (a Map iterates in insertion order).
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const result = fn();
    this.entries.set(key, { result, expires: now + this.ttlMs });
    // A run that failed changed nothing: the same form may be sent again and run.
    result.catch(() => { if (this.entries.get(key)?.result === result) this.entries.delete(key); });
    return { value: await result, repeated: false };
  }

  private forgetExpired(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.expires > now) break; // inserted in order with one lifetime: the rest expire later
      this.entries.delete(key);
    }
  }
}
