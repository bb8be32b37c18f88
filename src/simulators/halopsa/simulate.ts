/** The sandbox trigger on HaloPSA: ticket status, note (an action), close, reopen and client rename, as the MSP makes them in Halo's UI. */
import { SimulationRefused, type SimulatedChange } from '../kit';
import type { HaloPsaSimulator } from './simulator-api';
import type { HaloRecord } from './store';

/** Halo's built-in Closed status (id 9 in every Halo instance). */
const CLOSED = 9;

export function simulateHaloPsa(sim: HaloPsaSimulator, instance: string, change: SimulatedChange): { target_id: string } {
  const open = (t: HaloRecord) => t.status_id !== CLOSED;
  const ticket = (want: (t: HaloRecord) => boolean, what: string): HaloRecord => {
    const tickets = sim.list(instance, 'tickets');
    const t = change.target_id === undefined ? tickets.find(want) : tickets.find((x) => String(x.id) === change.target_id);
    if (!t) throw new SimulationRefused(change.target_id === undefined ? `No ${what} ticket to change.` : `No ticket ${change.target_id}.`);
    if (!want(t)) throw new SimulationRefused(`Ticket ${change.target_id} is not ${what}.`);
    return t;
  };
  const statuses = sim.list(instance, 'statuses').filter((s) => s.id !== CLOSED);
  switch (change.kind) {
    case 'ticket_status': {
      const t = ticket(open, 'an open');
      const choices = statuses.filter((s) => s.id !== t.status_id);
      const s = change.status === undefined ? choices[0] : choices.find((x) => String(x.name).toLowerCase() === change.status!.toLowerCase());
      if (!s) throw new SimulationRefused(`No other open status${change.status ? ` named ${change.status}` : ''}.`);
      sim.update(instance, 'tickets', t.id, { status_id: s.id });
      return { target_id: String(t.id) };
    }
    case 'ticket_note': {
      const t = ticket(() => true, 'a');
      sim.addAction(instance, t.id, change.text ?? 'Note added in the sandbox');
      return { target_id: String(t.id) };
    }
    case 'ticket_close': {
      const t = ticket(open, 'an open');
      sim.update(instance, 'tickets', t.id, { status_id: CLOSED });
      return { target_id: String(t.id) };
    }
    case 'ticket_reopen': {
      const t = ticket((x) => !open(x), 'a closed');
      sim.update(instance, 'tickets', t.id, { status_id: statuses[0].id });
      return { target_id: String(t.id) };
    }
    case 'company_renamed': {
      const clients = sim.list(instance, 'clients');
      const c = change.target_id === undefined ? clients[0] : clients.find((x) => String(x.id) === change.target_id);
      if (!c) throw new SimulationRefused(`No company ${change.target_id}.`);
      sim.update(instance, 'clients', c.id, { name: change.name ?? `${c.name} (renamed)` });
      return { target_id: String(c.id) };
    }
    default:
      throw new SimulationRefused(`A PSA cannot make the change ${change.kind}.`);
  }
}
