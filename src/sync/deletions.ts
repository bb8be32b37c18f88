/**
 * Deletions: a record the vendor no longer lists leaves the store. Only after a COMPLETE id listing of
 * the resource (every page fetched): a page that failed midway throws before this runs, so nothing is
 * dropped on a partial listing. A full sync's own listing serves; an incremental sync (which sees only
 * what changed) runs an id scan — the same listing without a watermark, nothing written — at most once
 * per scan interval per connection and resource, so the periodic sync finds deletions too.
 *
 * Hard delete: nothing references a record row by key (events, links and identity rows keep the
 * canonical id as plain data), and the deletion event carries the vendor id and the record's last summary.
 */
import type { ReadConnector, SyncContext, SyncResource } from '../connectors/types';
import { escapeStoredText } from './stored-text';

/** The record families whose deletions raise events (the rest leave the store silently). */
export const DELETION_EVENT_RESOURCES: readonly SyncResource[] = ['tickets', 'devices', 'companies'];

/** How often an incremental sync re-lists a resource's ids to find deletions. */
export const DEFAULT_DELETION_SCAN_MS = 15 * 60_000;

export class DeletionScanner {
  private readonly lastScan = new Map<string, number>();

  constructor(private readonly intervalMs = DEFAULT_DELETION_SCAN_MS) {}

  /** Whether an incremental sync of this resource should list every id now. */
  due(connectionId: string, resource: SyncResource, now = Date.now()): boolean {
    const last = this.lastScan.get(`${connectionId}:${resource}`);
    return last === undefined || now - last >= this.intervalMs;
  }

  /** Every resource is due at its next sync (the interval has passed everywhere; tests). */
  forget(): void {
    this.lastScan.clear();
  }

  /** A complete listing was seen (a full sync or an id scan). */
  scanned(connectionId: string, resource: SyncResource, now = Date.now()): void {
    this.lastScan.set(`${connectionId}:${resource}`, now);
  }
}

/**
 * Every source id of a complete listing, in stored form (as the store keys its rows): the connector's
 * id-only listing where its vendor has one, else the whole records.
 */
export async function listIds(connector: ReadConnector, resource: SyncResource, ctx: SyncContext): Promise<Set<string>> {
  const ids = new Set<string>();
  const idPages = connector.listIds?.(resource, ctx);
  if (idPages) {
    for await (const page of idPages) for (const id of page) ids.add(escapeStoredText(id));
    return ids;
  }
  for await (const page of connector.fetch(resource, ctx)) for (const r of page) ids.add(escapeStoredText(r.sourceId));
  return ids;
}
