/**
 * One NinjaOne instance's data (the dataset a client id selects), held in memory.
 * Organizations and devices are kept sorted by id so that `after` paging is a binary search,
 * which keeps 50,000-device instances fast.
 */
import { randomUUID } from 'node:crypto';
import {
  softwareKey, type NinjaAlert, type NinjaDevice, type NinjaOrganization, type NinjaOsPatch,
  type NinjaRecordByResource, type NinjaResource, type NinjaSoftware, type NinjaScript, type NinjaActivity,
} from './types';

/** A script run the API accepted (POST /v2/device/{id}/script/run); `done` once the agent ran it. */
export interface ScriptRun {
  deviceId: number;
  scriptId: number;
  runAs: string | null;
  parameters: string | null;
  /** Epoch seconds. */
  requestedAt: number;
  done: boolean;
}

/** A server-side report cursor of /v2/queries/* (a snapshot of the matching rows). */
export interface QueryCursor {
  name: string;
  query: string;
  rows: readonly unknown[];
  nextOffset: number;
  pageSize: number;
  /** Epoch ms. */
  expiresAt: number;
}

/** Index of the first element whose id is greater than `after` (array sorted by id). */
export function firstIndexAfter(sorted: readonly { id: number }[], after: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid].id <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Up to `size` records with id > after that pass `keep`, in id order. */
export function pageAfter<T extends { id: number }>(
  sorted: readonly T[], after: number, size: number, keep: ((r: T) => boolean) | null,
): T[] {
  const out: T[] = [];
  for (let i = firstIndexAfter(sorted, after); i < sorted.length && out.length < size; i++) {
    if (!keep || keep(sorted[i])) out.push(sorted[i]);
  }
  return out;
}

function insertSorted<T extends { id: number }>(sorted: T[], rec: T): void {
  if (sorted.length === 0 || sorted[sorted.length - 1].id < rec.id) {
    sorted.push(rec);
    return;
  }
  const at = firstIndexAfter(sorted, rec.id);
  if (at > 0 && sorted[at - 1].id === rec.id) throw new Error(`duplicate id ${rec.id}`);
  sorted.splice(at, 0, rec);
}

export class NinjaInstance {
  readonly organizations: NinjaOrganization[] = [];
  readonly devices: NinjaDevice[] = [];
  readonly software: NinjaSoftware[] = [];
  readonly osPatches: NinjaOsPatch[] = [];
  readonly alerts: NinjaAlert[] = [];
  readonly scripts: NinjaScript[] = [];
  /** Device activity log, oldest first (ids ascend). */
  readonly activities: NinjaActivity[] = [];
  /** Every script run received, in order (tests count them). */
  readonly runs: ScriptRun[] = [];
  readonly cursors = new Map<string, QueryCursor>();
  private readonly deviceById = new Map<number, NinjaDevice>();
  private readonly orgById = new Map<number, NinjaOrganization>();

  device(id: number): NinjaDevice | undefined {
    return this.deviceById.get(id);
  }
  organization(id: number): NinjaOrganization | undefined {
    return this.orgById.get(id);
  }
  /** Highest ids ever issued (a removed or pre-restart id is never issued again). */
  readonly idFloor = { devices: 0, organizations: 0 };
  nextDeviceId(): number {
    return Math.max(this.devices[this.devices.length - 1]?.id ?? 0, this.idFloor.devices) + 1;
  }
  nextOrganizationId(): number {
    return Math.max(this.organizations[this.organizations.length - 1]?.id ?? 0, this.idFloor.organizations) + 1;
  }

  list<R extends NinjaResource>(resource: R): NinjaRecordByResource[R][] {
    const lists: { [K in NinjaResource]: NinjaRecordByResource[K][] } = {
      organizations: this.organizations, devices: this.devices, software: this.software,
      'os-patches': this.osPatches, alerts: this.alerts, scripts: this.scripts,
    };
    return lists[resource];
  }

  /** A record by its key: id for organizations/devices/os-patches, uid for alerts,
   *  `${deviceId}:${name}:${version}` for software. */
  find<R extends NinjaResource>(resource: R, id: string | number): NinjaRecordByResource[R] | undefined {
    const key = String(id);
    let found: unknown;
    switch (resource) {
      case 'devices': found = this.deviceById.get(Number(key)); break;
      case 'organizations': found = this.orgById.get(Number(key)); break;
      case 'software': found = this.software.find((r) => softwareKey(r) === key); break;
      case 'os-patches': found = this.osPatches.find((r) => r.id === key); break;
      case 'alerts': found = this.alerts.find((r) => r.uid === key); break;
      case 'scripts': found = this.scripts.find((r) => String(r.id) === key); break;
    }
    return found as NinjaRecordByResource[R] | undefined;
  }

  insert<R extends NinjaResource>(resource: R, record: NinjaRecordByResource[R]): void {
    switch (resource) {
      case 'devices': {
        const d = record as NinjaDevice;
        insertSorted(this.devices, d);
        this.deviceById.set(d.id, d);
        break;
      }
      case 'organizations': {
        const o = record as NinjaOrganization;
        insertSorted(this.organizations, o);
        this.orgById.set(o.id, o);
        break;
      }
      case 'software': this.software.push(record as NinjaSoftware); break;
      case 'os-patches': this.osPatches.push(record as NinjaOsPatch); break;
      case 'alerts': this.alerts.push(record as NinjaAlert); break;
      case 'scripts': this.scripts.push(record as NinjaScript); break;
    }
  }

  remove(resource: NinjaResource, id: string | number): boolean {
    const target = this.find(resource, id);
    if (!target) return false;
    const list = this.list(resource) as unknown[];
    list.splice(list.indexOf(target), 1);
    if (resource === 'devices' || resource === 'organizations') {
      this.idFloor[resource] = Math.max(this.idFloor[resource], Number(id));
    }
    if (resource === 'devices') this.deviceById.delete(Number(id));
    if (resource === 'organizations') this.orgById.delete(Number(id));
    return true;
  }

  // --- report cursors -------------------------------------------------------------------------

  openCursor(query: string, rows: readonly unknown[], pageSize: number, ttlMs: number): QueryCursor {
    this.pruneCursors();
    const cursor: QueryCursor = { name: randomUUID(), query, rows, nextOffset: 0, pageSize, expiresAt: Date.now() + ttlMs };
    this.cursors.set(cursor.name, cursor);
    return cursor;
  }

  cursor(name: string, query: string): QueryCursor | undefined {
    this.pruneCursors();
    const c = this.cursors.get(name);
    return c && c.query === query ? c : undefined;
  }

  private pruneCursors(): void {
    const now = Date.now();
    for (const [name, c] of this.cursors) if (c.expiresAt <= now) this.cursors.delete(name);
  }
}
