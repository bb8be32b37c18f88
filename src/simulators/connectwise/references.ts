/**
 * Resolving the reference objects a client sends (`{id}`, `{name}` or `{identifier}`) to stored
 * records, and the defaults ConnectWise picks when a reference is left out.
 */
import type { CwRecord, Instance } from './store';

/** The stored record a reference points at, or undefined (a bad reference). */
export function resolveRef(
  inst: Instance,
  resource: string,
  ref: unknown,
  candidates?: readonly CwRecord[],
): CwRecord | undefined {
  if (ref == null || typeof ref !== 'object') return undefined;
  const r = ref as CwRecord;
  const rows = candidates ?? inst.table(resource).rows;
  if (r.id != null) {
    const id = Number(r.id);
    return candidates ? rows.find((x) => x.id === id) : inst.table(resource).get(id);
  }
  const byText = (key: string) =>
    typeof r[key] === 'string' ? rows.find((x) => typeof x[key] === 'string' && x[key].toLowerCase() === r[key].toLowerCase()) : undefined;
  return byText('identifier') ?? byText('name');
}

export function statusesOfBoard(inst: Instance, boardId: number): CwRecord[] {
  return inst.table('statuses').rows.filter((s) => s.board?.id === boardId);
}

/** The status a new ticket on this board starts in: the board's default, else its first open one. */
export function defaultStatus(inst: Instance, boardId: number): CwRecord | undefined {
  const list = statusesOfBoard(inst, boardId).filter((s) => !s.inactive).sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0));
  return list.find((s) => s.defaultFlag) ?? list.find((s) => !s.closedStatus) ?? list[0];
}

/** The status `closedFlag: true` moves a ticket to: the board's first closed status. */
export function closedStatusOf(inst: Instance, boardId: number): CwRecord | undefined {
  return statusesOfBoard(inst, boardId)
    .filter((s) => s.closedStatus && !s.inactive)
    .sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0))[0];
}

export function defaultPriority(inst: Instance): CwRecord | undefined {
  const rows = inst.table('priorities').rows;
  return rows.find((p) => p.defaultFlag) ?? rows[0];
}

export function defaultServiceBoard(inst: Instance): CwRecord | undefined {
  return inst.table('boards').rows.find((b) => !b.inactiveFlag && !b.projectFlag);
}

/** The member the simulator names in `updatedBy` for a change made "in the UI" by the MSP. */
export function uiActor(inst: Instance): string {
  return inst.table('members').rows.find((m) => !m.inactiveFlag)?.identifier ?? 'admin';
}
