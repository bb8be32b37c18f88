/** The projects feature's store (docs/architecture.md, Folders): the synced projects and companies a project write names. */
import type { DataSource } from 'typeorm';

export interface ProjectRow {
  connection_id: string;
  source_id: string;
  baseline: boolean;
  company_name: string | null;
  company_source_id: string | null;
}

export class ProjectsStore {
  constructor(private readonly ds: DataSource) {}

  /** Every synced project of the tenant with this source id (one per PSA connection at most). */
  projects(tenantId: string, projectSourceId: string): Promise<ProjectRow[]> {
    return this.ds.query(
      'SELECT connection_id, source_id, baseline, company_name, company_source_id FROM projects WHERE tenant_id = $1 AND source_id = $2 ORDER BY connection_id',
      [tenantId, projectSourceId],
    );
  }

  /** The source ids of the connection's companies with exactly this name. */
  companiesNamed(connectionId: string, name: string): Promise<{ source_id: string }[]> {
    return this.ds.query('SELECT source_id FROM companies WHERE connection_id = $1 AND name = $2', [connectionId, name]);
  }
}
