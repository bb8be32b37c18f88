/**
 * The one way a feature reacts to a change another feature made: the publisher declares the kind of change
 * (its payload, or for a change inside a transaction its whole reaction shape) by augmenting `ChangeKinds`
 * in its own folder, each reacting feature declares its reactions in its FeatureModule (`reactions`, applied
 * by the composition root in feature order), and the publisher only publishes. Every kind and who reacts
 * to it: docs/architecture.md, Sync.
 *
 * Two sorts of kind. A committed change (`publish`): its reactions run in subscription order, each awaited,
 * after the change has committed; a reaction that fails is logged and never fails the change nor the next
 * reaction. A change inside a transaction (records.page_written): its publisher runs the reactions itself,
 * in the transaction (`reactionsTo`), where a failure undoes the change.
 *
 * Here, low in the layers, with no import of any feature: every feature may publish and subscribe.
 */

/** Work a reaction inside a transaction owes once that transaction has committed (enqueue webhook deliveries). */
export type AfterCommit = () => Promise<void>;

/** A reaction to a committed change of payload `P`. */
export type CommittedReaction<P> = (payload: P) => Promise<void> | void;

/**
 * Every kind of change, each the shape of its reactions. Declared by the publisher, with its payload, in its
 * own folder (`declare module '.../shared/committed-changes' { interface ChangeKinds { ... } }`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the publishers' augmentations
export interface ChangeKinds {}

export type ChangeKind = keyof ChangeKinds;

/** The payload of a committed change, from its reaction's shape. */
export type PayloadOf<K extends ChangeKind> = ChangeKinds[K] extends CommittedReaction<infer P> ? P : never;

/** Kinds whose reactions are plain functions of a committed change (publish runs them). */
export type CommittedKind = { [K in ChangeKind]: ChangeKinds[K] extends CommittedReaction<never> ? K : never }[ChangeKind];

/** One declared reaction: who (`name`, for the logs) reacts to which change, and how. */
export type Subscription = { [K in ChangeKind]: { kind: K; name: string; reaction: ChangeKinds[K] } }[ChangeKind];

/** A subscription, typed by its kind (a feature's `reactions` lists these). */
export function reactTo<K extends ChangeKind>(kind: K, name: string, reaction: ChangeKinds[K]): Subscription {
  return { kind, name, reaction } as Subscription;
}

/** Where a failed reaction to a committed change is reported. */
export interface ReactionLog {
  error(detail: object, message: string): void;
}

export class CommittedChanges {
  private readonly byKind = new Map<ChangeKind, { name: string; reaction: unknown }[]>();
  private log: ReactionLog | null = null;

  useLogger(log: ReactionLog): void {
    this.log = log;
  }

  subscribe(subscription: Subscription): void {
    const list = this.byKind.get(subscription.kind) ?? [];
    list.push({ name: subscription.name, reaction: subscription.reaction });
    this.byKind.set(subscription.kind, list);
  }

  /** The reactions to `kind`, in subscription order: for a publisher that runs them itself (inside its transaction). */
  reactionsTo<K extends ChangeKind>(kind: K): readonly { name: string; reaction: ChangeKinds[K] }[] {
    return (this.byKind.get(kind) ?? []) as { name: string; reaction: ChangeKinds[K] }[];
  }

  /**
   * Tells every reaction to `kind` of a committed change, one after another (a reaction that answers at once
   * runs at once: clearing a cache is done when publish returns). A reaction's failure is logged (with
   * `context`, say the tenant) and the next still runs: the change is made whatever its reactions do.
   */
  publish<K extends CommittedKind>(kind: K, payload: PayloadOf<K>, context: object = {}): Promise<void> {
    const reactions = this.reactionsTo(kind);
    const failed = (name: string, err: unknown) =>
      this.log?.error({ ...context, change: kind, reaction: name, err: (err as Error)?.message ?? String(err) }, 'a reaction to a committed change failed');
    const runFrom = (first: number): Promise<void> => {
      for (let i = first; i < reactions.length; i++) {
        const { name, reaction } = reactions[i];
        let out: Promise<void> | void;
        try {
          out = (reaction as CommittedReaction<PayloadOf<K>>)(payload);
        } catch (err) {
          failed(name, err);
          continue;
        }
        if (out instanceof Promise) return out.then(() => runFrom(i + 1), (err: unknown) => { failed(name, err); return runFrom(i + 1); });
      }
      return Promise.resolve();
    };
    return runFrom(0);
  }
}
