/** The connect feature's store (docs/architecture.md, Folders): the statements of a session beyond its repository. */
import type { DataSource } from 'typeorm';

export class ConnectSessionsStore {
  constructor(private readonly ds: DataSource) {}

  /** Appends a step to a session that has no tenant yet (its steps move to the tenant's audit log once it has one). */
  async appendStep(sessionId: string, step: Record<string, unknown>): Promise<void> {
    await this.ds.query(`UPDATE connect_sessions SET steps = steps || $2::jsonb WHERE id = $1`, [sessionId, JSON.stringify([step])]);
  }
}
