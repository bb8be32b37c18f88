/** The sandbox trigger on ConnectWise: ticket status, note, close, reopen and company rename, as the MSP makes them in the UI. */
import { SimulationRefused, type SimulatedChange } from '../kit';
import type { ConnectWiseSimulator } from './simulator-api';
import type { CwRecord } from './store';

const ticketOf = (sim: ConnectWiseSimulator, instance: string, target: string | undefined, want: (t: CwRecord) => boolean, what: string): CwRecord => {
  const tickets = sim.list(instance, 'tickets');
  const t = target === undefined ? tickets.find(want) : tickets.find((x) => String(x.id) === target);
  if (!t) throw new SimulationRefused(target === undefined ? `No ${what} ticket to change.` : `No ticket ${target}.`);
  if (!want(t)) throw new SimulationRefused(`Ticket ${target} is not ${what}.`);
  return t;
};
const boardStatuses = (sim: ConnectWiseSimulator, instance: string, t: CwRecord) =>
  sim.list(instance, 'statuses').filter((s) => s.board?.id === t.board?.id && !s.inactive).sort((a, b) => a.sortOrder - b.sortOrder);

export function simulateConnectWise(sim: ConnectWiseSimulator, instance: string, change: SimulatedChange): { target_id: string } {
  const open = (t: CwRecord) => t.closedFlag !== true;
  const closed = (t: CwRecord) => t.closedFlag === true;
  switch (change.kind) {
    case 'ticket_status': {
      const t = ticketOf(sim, instance, change.target_id, open, 'an open');
      const choices = boardStatuses(sim, instance, t).filter((s) => !s.closedStatus && s.id !== t.status?.id);
      const s = change.status === undefined ? choices[0] : choices.find((x) => x.name.toLowerCase() === change.status!.toLowerCase());
      if (!s) throw new SimulationRefused(`Board ${t.board?.name} has no other open status${change.status ? ` named ${change.status}` : ''}.`);
      sim.update(instance, 'tickets', t.id, { status: { id: s.id } });
      return { target_id: String(t.id) };
    }
    case 'ticket_note': {
      const t = ticketOf(sim, instance, change.target_id, () => true, 'a');
      sim.addNote(instance, t.id, change.text ?? 'Note added in the sandbox', { detailDescriptionFlag: true });
      return { target_id: String(t.id) };
    }
    case 'ticket_close':
    case 'ticket_reopen': {
      const closing = change.kind === 'ticket_close';
      const t = ticketOf(sim, instance, change.target_id, closing ? open : closed, closing ? 'an open' : 'a closed');
      const statuses = boardStatuses(sim, instance, t);
      const s = closing ? statuses.find((x) => x.closedStatus) : (statuses.find((x) => x.defaultFlag && !x.closedStatus) ?? statuses.find((x) => !x.closedStatus));
      if (!s) throw new SimulationRefused(`Board ${t.board?.name} has no ${closing ? 'closed' : 'open'} status.`);
      sim.update(instance, 'tickets', t.id, { status: { id: s.id } });
      return { target_id: String(t.id) };
    }
    case 'company_renamed': {
      const companies = sim.list(instance, 'companies');
      const c = change.target_id === undefined ? companies[0] : companies.find((x) => String(x.id) === change.target_id);
      if (!c) throw new SimulationRefused(`No company ${change.target_id}.`);
      sim.update(instance, 'companies', c.id, { name: change.name ?? `${c.name} (renamed)` });
      return { target_id: String(c.id) };
    }
    default:
      throw new SimulationRefused(`A PSA cannot make the change ${change.kind}.`);
  }
}
