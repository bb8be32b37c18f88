/** The connect sessions' findings that permission-gaps.ts reads: what each completed session found missing. */
import { IsNull, Not, type DataSource } from 'typeorm';
import { ConnectSession } from '../../entities';

export type SessionFindings = Pick<ConnectSession, 'id' | 'connectionIds' | 'missingPermissions' | 'completedAt'>;

/** The tenant's completed connect sessions, latest first, with the connections they made and what they lacked. */
export function completedSessionFindings(ds: DataSource, tenantId: string): Promise<SessionFindings[]> {
  return ds.getRepository(ConnectSession).find({
    where: { tenantId, state: 'completed', completedAt: Not(IsNull()) },
    select: { id: true, connectionIds: true, missingPermissions: true, completedAt: true },
    order: { completedAt: 'DESC' },
  });
}
