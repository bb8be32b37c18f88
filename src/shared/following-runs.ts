/**
 * Runs of one task by key, never two of a key at once. A call while a run of its key is under way waits for
 * that run to end and then shares one run with every other call that came meanwhile: the run of all their
 * requests combined. So each caller gets a run that began after it asked (whatever changed before its call
 * is seen) and that does at least what it asked, and a burst of calls during one long run costs two runs,
 * not one each side by side. A failed run fails its own callers only; the run after it still goes.
 */
interface Runs<T, R> {
  /** The run under way (or the last to start). */
  current: Promise<T>;
  /** The run the callers since `current` started share, and what they asked for together; it starts once `current` has ended. */
  next: { run: Promise<T>; request: R } | null;
}

const ignore = () => undefined;

export class FollowingRuns<T, R> {
  private readonly runs = new Map<string, Runs<T, R>>();

  /** `combine`: one request that does what both do (the run a later caller joins does what each asked). */
  constructor(private readonly combine: (a: R, b: R) => R) {}

  run(key: string, request: R, task: (request: R) => Promise<T>): Promise<T> {
    const runs = this.runs.get(key);
    if (!runs) {
      const started: Runs<T, R> = { current: Promise.resolve().then(() => task(request)), next: null };
      this.runs.set(key, started);
      this.forgetAfter(key, started, started.current);
      return started.current;
    }
    if (runs.next) {
      runs.next.request = this.combine(runs.next.request, request);
      return runs.next.run;
    }
    // Callers from now on join this one until it starts; its task reads the request they combined then.
    const next: { run: Promise<T>; request: R } = {
      request,
      run: runs.current.then(ignore, ignore).then(() => {
        // From here on it is the run under way: callers from now on wait for it and share the one after.
        runs.current = next.run;
        runs.next = null;
        return task(next.request);
      }),
    };
    runs.next = next;
    this.forgetAfter(key, runs, next.run);
    return next.run;
  }

  /** How many keys have a run under way or waiting. */
  get size(): number {
    return this.runs.size;
  }

  private forgetAfter(key: string, runs: Runs<T, R>, run: Promise<T>): void {
    const forget = () => {
      if (this.runs.get(key) === runs && runs.current === run && runs.next === null) this.runs.delete(key);
    };
    run.then(forget, forget);
  }
}
