/**
 * The statements of reference resolution (references.ts): what a write names, read from the synced
 * lists of its target connection (priorities, statuses, boards, members, projects).
 */
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import { preparedQuery } from '../db/prepared';

export interface PriorityRow { source_id: string; canonical: string | null }
export interface StatusRow { source_id: string; name: string; canonical: string | null; board_source_id: string | null; closed: boolean }

export class ReferencesStore {
  constructor(private readonly ds: DataSource) {}

  /** The connection's ticket priorities, in the vendor's order. */
  priorities(c: Connection): Promise<PriorityRow[]> {
    return preparedQuery(this.ds,
      'SELECT source_id, canonical FROM ticket_priorities WHERE connection_id = $1 ORDER BY sort_order NULLS LAST, source_id', [c.id],
    );
  }

  /** The connection's ticket statuses (every board's), in the vendor's order. */
  statuses(c: Connection): Promise<StatusRow[]> {
    return preparedQuery(this.ds,
      'SELECT source_id, name, canonical, board_source_id, closed FROM ticket_statuses WHERE connection_id = $1 ORDER BY sort_order NULLS LAST, source_id', [c.id],
    );
  }

  async hasBoard(c: Connection, boardSourceId: string): Promise<boolean> {
    return (await preparedQuery(this.ds, 'SELECT 1 FROM ticket_boards WHERE connection_id = $1 AND source_id = $2', [c.id, boardSourceId])).length > 0;
  }

  /** A member by its ref: whether it is active (null: the vendor does not say); undefined when there is none. */
  async member(c: Connection, memberRef: string): Promise<{ active: boolean | null } | undefined> {
    const rows: { active: boolean | null }[] = await preparedQuery(this.ds,
      'SELECT active FROM members WHERE connection_id = $1 AND member_ref = $2', [c.id, memberRef],
    );
    return rows[0];
  }

  /** Whether the connection has synced any row of the list. */
  async hasList(c: Connection, table: 'members' | 'ticket_statuses'): Promise<boolean> {
    return (await preparedQuery(this.ds, `SELECT 1 FROM ${table} WHERE connection_id = $1 LIMIT 1`, [c.id])).length > 0;
  }

  /** A synced project: whether it is a baseline; undefined when it is not synced. */
  async project(c: Connection, projectSourceId: string): Promise<{ baseline: boolean } | undefined> {
    const rows: { baseline: boolean }[] = await preparedQuery(this.ds,
      'SELECT baseline FROM projects WHERE connection_id = $1 AND source_id = $2', [c.id, projectSourceId],
    );
    return rows[0];
  }

  /** The first (by source id) project that is not a baseline, of a company or (null) of any. */
  async firstWritableProject(c: Connection, companySourceId: string | null): Promise<string | undefined> {
    const rows: { source_id: string }[] = await preparedQuery(this.ds,
      `SELECT source_id FROM projects WHERE connection_id = $1 AND baseline = false
         AND ($2::text IS NULL OR company_source_id = $2) ORDER BY source_id LIMIT 1`, [c.id, companySourceId],
    );
    return rows[0]?.source_id;
  }
}
