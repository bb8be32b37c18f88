/** The sandbox trigger on Kaseya BMS: ticket status, note, close, reopen and account rename, as the MSP makes them in BMS's UI. */
import { SimulationRefused, type SimulatedChange } from '../kit';
import { COMPLETED_STATUS_TYPE } from './mutations';
import type { KaseyaBmsSimulator } from './simulator-api';
import type { BmsRecord } from './store';

export function simulateKaseyaBms(sim: KaseyaBmsSimulator, instance: string, change: SimulatedChange): { target_id: string } {
  const statuses = sim.list(instance, 'statuses').filter((s) => s.IsActive !== false);
  const completed = new Set(statuses.filter((s) => s.TypeId === COMPLETED_STATUS_TYPE).map((s) => s.Id));
  const open = (t: BmsRecord) => !completed.has(t.StatusId);
  const ticket = (want: (t: BmsRecord) => boolean, what: string): BmsRecord => {
    const tickets = sim.list(instance, 'tickets');
    const t = change.target_id === undefined ? tickets.find(want) : tickets.find((x) => String(x.Id) === change.target_id);
    if (!t) throw new SimulationRefused(change.target_id === undefined ? `No ${what} ticket to change.` : `No ticket ${change.target_id}.`);
    if (!want(t)) throw new SimulationRefused(`Ticket ${change.target_id} is not ${what}.`);
    return t;
  };
  const openStatuses = statuses.filter((s) => !completed.has(s.Id));
  switch (change.kind) {
    case 'ticket_status': {
      const t = ticket(open, 'an open');
      const choices = openStatuses.filter((s) => s.Id !== t.StatusId);
      const s = change.status === undefined ? choices[0] : choices.find((x) => String(x.Name).toLowerCase() === change.status!.toLowerCase());
      if (!s) throw new SimulationRefused(`No other open status${change.status ? ` named ${change.status}` : ''}.`);
      sim.update(instance, 'tickets', t.Id, { StatusId: s.Id });
      return { target_id: String(t.Id) };
    }
    case 'ticket_note': {
      const t = ticket(() => true, 'a');
      sim.addNote(instance, t.Id, change.text ?? 'Note added in the sandbox');
      return { target_id: String(t.Id) };
    }
    case 'ticket_close': {
      const t = ticket(open, 'an open');
      sim.update(instance, 'tickets', t.Id, { StatusId: [...completed][0] });
      return { target_id: String(t.Id) };
    }
    case 'ticket_reopen': {
      const t = ticket((x) => !open(x), 'a completed');
      sim.update(instance, 'tickets', t.Id, { StatusId: openStatuses[0].Id });
      return { target_id: String(t.Id) };
    }
    case 'company_renamed': {
      const accounts = sim.list(instance, 'accounts');
      const a = change.target_id === undefined ? accounts[0] : accounts.find((x) => String(x.Id) === change.target_id);
      if (!a) throw new SimulationRefused(`No company ${change.target_id}.`);
      sim.update(instance, 'accounts', a.Id, { AccountName: change.name ?? `${a.AccountName} (renamed)` });
      return { target_id: String(a.Id) };
    }
    default:
      throw new SimulationRefused(`A PSA cannot make the change ${change.kind}.`);
  }
}
