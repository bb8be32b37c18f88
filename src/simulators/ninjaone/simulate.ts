/** The sandbox trigger on NinjaOne: a device goes offline (its agent stops checking in). */
import { SimulationRefused, type SimulatedChange } from '../kit';
import type { NinjaOneSimulator } from './simulator-api';

export function simulateNinjaOne(sim: NinjaOneSimulator, instance: string, change: SimulatedChange): { target_id: string } {
  if (change.kind !== 'device_offline') throw new SimulationRefused(`An RMM cannot make the change ${change.kind}.`);
  const devices = sim.list(instance, 'devices');
  const d = change.target_id === undefined ? devices.find((x) => !x.offline) : devices.find((x) => String(x.id) === change.target_id);
  if (!d) throw new SimulationRefused(change.target_id === undefined ? 'No online device to take offline.' : `No device ${change.target_id}.`);
  if (d.offline) throw new SimulationRefused(`Device ${change.target_id} is already offline.`);
  sim.update(instance, 'devices', d.id, { offline: true });
  return { target_id: String(d.id) };
}
