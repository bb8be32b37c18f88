/**
 * Where a service says what commits together. Which writes land together or not at all is a rule, so a
 * service decides the boundary; the statements inside it are its stores' (docs/architecture.md, Folders).
 * The manager handed to the work is only passed on to store methods: a service that ran a statement on it
 * would fail test/store-layer.test.ts like any other data access outside the stores.
 */
import type { DataSource, EntityManager } from 'typeorm';

export class Transactions {
  constructor(private readonly ds: DataSource) {}

  /** Runs `work` in one transaction: every store call handed its manager commits, or none does. */
  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }

  /** No transaction: each store call handed this manager commits on its own. */
  get outside(): EntityManager {
    return this.ds.manager;
  }
}
