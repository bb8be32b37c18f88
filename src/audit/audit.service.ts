/** The audit log: one entry per sync outcome, commit and refusal, per tenant. */
import type { DataSource, EntityManager } from 'typeorm';
import type { AuditEntry } from '../../entities';
import { afterKey, listCursor, toPage, type Page } from '../shared/paging';
import { AuditStore, type AuditInput, type AuditQuery } from './audit.store';

/** The audit log pages newest first on its sequence number. */
export const AUDIT_CURSOR = listCursor('audit', ['int']);

export class AuditService {
  private readonly store: AuditStore;

  constructor(ds: DataSource) {
    this.store = new AuditStore(ds);
  }

  async write(input: AuditInput, manager?: EntityManager): Promise<void> {
    await this.store.insertEntry(input, manager);
  }

  /**
   * Newest first, keyset on `seq` (the page after `before`, the seq of the previous page's last entry).
   * `isvId` set: the system's entries and that ISV's own, never another ISV's.
   */
  async list(tenantId: string, q: AuditQuery, isvId: string | null): Promise<Page<AuditEntry>> {
    const before = afterKey(AUDIT_CURSOR, q)?.[0] ?? null;
    const page = toPage(await this.store.entries(tenantId, q, before, isvId), q.limit, AUDIT_CURSOR, (e) => [String(e.seq)]);
    await this.labelSubjects(tenantId, page.items);
    return page;
  }

  /**
   * Each entry's subject label, one read per kind of subject on the page. An entry that recorded its own
   * label (`detail.subject_label`, a grant change) keeps it.
   */
  private async labelSubjects(tenantId: string, entries: AuditEntry[]): Promise<void> {
    const byKind = new Map<string, AuditEntry[]>();
    for (const e of entries) {
      const kind = e.action.split('.')[0];
      if (!e.subjectRef || !this.store.labels(kind) || typeof e.detail?.subject_label === 'string') continue;
      byKind.set(kind, [...(byKind.get(kind) ?? []), e]);
    }
    await Promise.all([...byKind].map(async ([kind, list]) => {
      const labels = await this.store.subjectLabels(tenantId, kind, [...new Set(list.map((e) => e.subjectRef!))]);
      for (const e of list) {
        const label = labels.get(e.subjectRef!);
        if (label) e.detail = { ...e.detail, subject_label: label };
      }
    }));
  }

  async clearTenant(tenantId: string, manager?: EntityManager): Promise<void> {
    await this.store.clearTenant(tenantId, manager);
  }
}
