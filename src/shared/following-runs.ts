/**
 * Runs of one task by key, never two of a key at once. A call while a run of its key is under way waits for
 * that run to end and then shares one run with every other call that came meanwhile. So each caller gets a
 * run that began after it asked (whatever changed before its call is seen), and a burst of calls during one
 * long run costs two runs, not one each side by side. A failed run fails its own callers only; the run after
 * it still goes.
 */
interface Runs<T> {
  /** The run under way (or the last to start). */
  current: Promise<T>;
  /** The run the callers since `current` started share; it starts once `current` has ended. */
  next: Promise<T> | null;
}

const ignore = () => undefined;

export class FollowingRuns<T> {
  private readonly runs = new Map<string, Runs<T>>();

  run(key: string, task: () => Promise<T>): Promise<T> {
    const runs = this.runs.get(key);
    if (!runs) {
      const started: Runs<T> = { current: Promise.resolve().then(task), next: null };
      this.runs.set(key, started);
      this.forgetAfter(key, started, started.current);
      return started.current;
    }
    if (runs.next) return runs.next;
    const next: Promise<T> = runs.current.then(ignore, ignore).then(() => {
      // From here on it is the run under way: callers from now on wait for it and share the one after.
      runs.current = next;
      runs.next = null;
      return task();
    });
    runs.next = next;
    this.forgetAfter(key, runs, next);
    return next;
  }

  /** How many keys have a run under way or waiting (for tests and /metrics). */
  get size(): number {
    return this.runs.size;
  }

  private forgetAfter(key: string, runs: Runs<T>, run: Promise<T>): void {
    const forget = () => {
      if (this.runs.get(key) === runs && runs.current === run && runs.next === null) this.runs.delete(key);
    };
    run.then(forget, forget);
  }
}
