/**
 * Resolving what a write names to the vendor's ids, from the synced lists of the target connection:
 * priority and status (canonical or an id from the list), board and member ids.
 * An unknown id is a 422 `validation` naming the field; a canonical status without a mapping is
 * `status_unmapped` with the mapped vendor statuses in `allowed`.
 */
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import type { NamedProjectState } from '../connectors/write-types';
import { CANONICAL_PRIORITIES, CANONICAL_STATUSES } from '../connectors/canonical';
import { ServiceError } from '../errors/service-error';
import { ReferencesStore } from './references.store';

export function fieldError(field: string, message: string): ServiceError {
  return new ServiceError('validation', message, { details: { field, problems: [{ field, message }] } });
}

export class ReferenceResolver {
  private readonly store: ReferencesStore;

  constructor(ds: DataSource) {
    this.store = new ReferencesStore(ds);
  }

  /** Canonical priority or an id from ticket-priorities. Null when the connector has no priority list. */
  async priority(c: Connection, value: string): Promise<string | null> {
    const rows = await this.store.priorities(c);
    if (rows.length === 0) {
      if ((CANONICAL_PRIORITIES as readonly string[]).includes(value)) return null;
      throw fieldError('priority', `Priority "${value}" is not a canonical priority (${CANONICAL_PRIORITIES.join(', ')}), and ${c.connector} has no priority list.`);
    }
    const byId = rows.find((r) => r.source_id === value);
    if (byId) return byId.source_id;
    if ((CANONICAL_PRIORITIES as readonly string[]).includes(value)) {
      const mapped = rows.find((r) => r.canonical === value);
      if (mapped) return mapped.source_id;
      throw fieldError('priority', `No ${c.connector} priority maps to "${value}".`);
    }
    throw fieldError('priority', `Priority "${value}" is neither canonical nor an id from the ticket-priorities list.`);
  }

  /** Canonical status or an id from ticket-statuses (optionally on a board). */
  async status(c: Connection, value: string, boardSourceId: string | null): Promise<string | null> {
    const rows = await this.store.statuses(c);
    if (rows.length === 0) {
      if ((CANONICAL_STATUSES as readonly string[]).includes(value)) return null;
      throw fieldError('status', `Status "${value}" is not canonical (${CANONICAL_STATUSES.join(', ')}), and ${c.connector} has no status list.`);
    }
    const byId = rows.find((r) => r.source_id === value && (!boardSourceId || !r.board_source_id || r.board_source_id === boardSourceId));
    if (byId) return byId.source_id;
    if ((CANONICAL_STATUSES as readonly string[]).includes(value)) {
      const onBoard = rows.filter((r) => !boardSourceId || !r.board_source_id || r.board_source_id === boardSourceId);
      const mapped = onBoard.find((r) => r.canonical === value);
      if (mapped) return mapped.source_id;
      const allowed = [...new Set(onBoard.filter((r) => r.canonical).map((r) => r.name))];
      throw new ServiceError('status_unmapped', `The canonical status "${value}" has no mapping on this ${c.connector} connection.`, {
        allowed, details: { field: 'status', allowed },
      });
    }
    throw fieldError('status', `Status "${value}" is neither canonical nor an id from the ticket-statuses list.`);
  }

  async board(c: Connection, value: string): Promise<string> {
    if (!(await this.store.hasBoard(c, value))) throw fieldError('board', `Board "${value}" is not an id from the ticket-boards list.`);
    return value;
  }

  async member(c: Connection, value: string): Promise<string> {
    const member = await this.store.member(c, value);
    if (!member) throw fieldError('member', `Member "${value}" is not an id from the members list.`);
    if (member.active === false) throw fieldError('member', `Member "${value}" is inactive in ${c.connector}.`);
    return value;
  }

  async hasList(c: Connection, table: 'members' | 'ticket_statuses'): Promise<boolean> {
    return this.store.hasList(c, table);
  }

  /** A project that can take the write: exists (404 otherwise) and is not a baseline (409). */
  async project(c: Connection, projectSourceId: string): Promise<string> {
    const state = await this.projectState(c, projectSourceId);
    if (state === 'missing') throw new ServiceError('project_requires_existing', `Project "${projectSourceId}" does not exist in ${c.connector}; the service never creates a project header.`);
    if (state === 'baseline') throw new ServiceError('project_not_writable', `Project "${projectSourceId}" is a baseline project and cannot take the write.`);
    return projectSourceId;
  }

  /** What the synced projects say of a named project; nothing is refused here. */
  async projectState(c: Connection, projectSourceId: string): Promise<NamedProjectState> {
    const project = await this.store.project(c, projectSourceId);
    if (!project) return 'missing';
    return project.baseline ? 'baseline' : 'writable';
  }

  /** The first writable project of a company, for findings routed to `project` without a project id. */
  async projectOfCompany(c: Connection, companySourceId: string | null): Promise<string> {
    const project = await this.store.firstWritableProject(c, companySourceId);
    if (!project) throw new ServiceError('project_requires_existing', 'No existing, writable project was named or found for this company; the service never creates a project header.');
    return project;
  }
}
