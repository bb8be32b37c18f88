/**
 * The sync hook: after each page is written, inside its transaction, turn what changed into events
 * and insert them; once the page has committed, announce the new ones. The first sync of a
 * connection's resource (the baseline) imports without events: an initial import is not a change.
 */
import type { EntityManager } from 'typeorm';
import type { PageWriteResult } from '../sync/record-writer';
import type { SyncListener } from '../sync/sync.service';
import { ChangeDetector } from './change-detector';
import type { EventsService } from './events.service';

export function eventsSyncListener(events: EventsService): SyncListener {
  return {
    async onPageWritten(manager: EntityManager, scope, result: PageWriteResult) {
      if (scope.baseline) return;
      if (result.created.length === 0 && result.updated.length === 0 && !result.deleted?.length) return;
      const drafts = new ChangeDetector({ tenantId: scope.tenantId, connection: scope.connection, resource: scope.resource }).detect(result);
      const ids = await events.insert(manager, scope.tenantId, drafts);
      if (ids.length === 0) return;
      return () => events.emitCommitted(scope.tenantId, ids);
    },
  };
}
