/**
 * Change detection's reaction to a written page (`records.page_written`, src/sync/page-pipeline.ts):
 * inside the page's transaction, turn what changed into events and insert them; once the page has
 * committed, announce the new ones (`events.committed`). Where the write is known before
 * its transaction, the updates' events are drafted then, and the transaction only inserts them. The
 * first sync of a connection's resource (the baseline) imports without events: an initial import is not
 * a change.
 */
import type { EntityManager } from 'typeorm';
import type { PageWriteResult } from '../sync/record-writer';
import type { PageReaction, PageScope } from '../sync/page-pipeline';
import { ChangeDetector } from './change-detector';
import type { EventsService, PreparedEvents } from './events.service';

/** Whether a page's write raises events: what a later sync (not the baseline) creates, updates or deletes. */
function tells(scope: PageScope, created: number, updated: number, deleted: number): boolean {
  return !scope.baseline && created + updated + deleted > 0;
}

export function eventsPageReaction(events: EventsService): PageReaction<PreparedEvents> {
  const detector = (scope: PageScope) => new ChangeDetector({ tenantId: scope.tenantId, connection: scope.connection, resource: scope.resource });
  return {
    // The updates' events drafted and written out before the transaction, where the write is known ahead;
    // it writes with the page whenever the page raises events.
    prepare(scope, expected) {
      const writesWith = tells(scope, expected.created, expected.updated.length, 0);
      if (scope.baseline || expected.updated.length === 0) return { writesWith };
      return { work: events.prepare(detector(scope).detectUpdated(expected.updated)), writesWith };
    },
    async written(manager: EntityManager, scope, result: PageWriteResult, updatedEvents) {
      if (!tells(scope, result.created.length, result.updated.length, result.deleted?.length ?? 0)) return;
      // What was prepared holds for the updates (the write did what was expected); what else changed is drafted here, in detect's order.
      // A page that created nothing (an ongoing sync's edits) inserts what was prepared, asking the detector nothing again.
      const drafts = !updatedEvents ? detector(scope).detect(result)
        : result.created.length === 0 ? updatedEvents
        : { rows: [...events.prepare(detector(scope).detectCreated(result.created)).rows, ...updatedEvents.rows] };
      const ids = await events.insert(manager, scope.tenantId, drafts);
      if (ids.length === 0) return;
      return () => events.emitCommitted(scope.tenantId, ids);
    },
  };
}
