/**
 * The read side's `fetch` as a table: one fetcher per resource a connector syncs, and a refusal naming
 * the connector for any other. Connector-neutral (the RMM connectors share it).
 */
import type { FetchedPage, FetchedRecord, PageCompletion, StoredComparison, SyncContext, SyncResource } from './types';

export type Fetchers = { [R in SyncResource]?: (ctx: SyncContext) => AsyncIterable<FetchedRecord<R>[]> };

/** The fetch of a resource the connector does not sync: it fails when it is read, as a fetch that cannot start does. */
export function unsupportedResource(connector: string, resource: string): AsyncIterable<never> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error(`${connector} connector does not sync ${resource}`)) }) };
}

/** `ReadConnector.fetch` over `fetchers`. */
export function fetchFrom(connector: string, fetchers: Fetchers) {
  return <R extends SyncResource>(resource: R, ctx: SyncContext): AsyncIterable<FetchedRecord<R>[]> => {
    const fetcher = fetchers[resource] as ((c: SyncContext) => AsyncIterable<FetchedRecord<R>[]>) | undefined;
    return fetcher ? fetcher(ctx) : unsupportedResource(connector, resource);
  };
}

/**
 * `read`'s answer, read once for all the resources one sync checks (`SyncContext.shared`; outside a sync,
 * each call reads). Both RMMs read their open alerts for the devices' alert flag and again for the
 * incidents: a check of both, every few seconds, read them twice.
 */
export function readOnce<T>(ctx: SyncContext, key: string, read: () => Promise<T>): Promise<T> {
  return ctx.shared ? ctx.shared(key, read) : read();
}

/** A page that the sync completes with the store's answer before preparing it (PageCompletion). */
export function pageToComplete<R extends SyncResource>(records: FetchedRecord<R>[], completion: PageCompletion): FetchedPage<R> {
  return Object.assign(records, { completion });
}

/**
 * The pages of a fetch, each completed (PageCompletion) with `compare`'s answer, or as if nothing were
 * stored: what the sync pipeline does, for readers outside a sync (tests, tools).
 */
export async function* completedPages<R extends SyncResource>(
  pages: AsyncIterable<FetchedRecord<R>[]>,
  compare?: (records: FetchedRecord<R>[], bookkeeping: readonly string[]) => Promise<StoredComparison>,
): AsyncGenerator<FetchedRecord<R>[]> {
  for await (const page of pages) {
    const completion = (page as FetchedPage<R>).completion;
    if (completion) await completion.complete(compare ? await compare(page, completion.bookkeeping) : null);
    yield page;
  }
}
