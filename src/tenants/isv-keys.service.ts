/**
 * The rules of an ISV's keys as its people manage them (docs/architecture.md, People; design: the ISV's
 * console, Keys): every member sees the list; only an owner creates, rotates and revokes. A key is minted
 * by AdminService.issueApiKey (the one way, shared with the operator's `issue_api_key`), never by a key:
 * no REST operation mints one. A rotation mints a new key and ends the old one after the chosen overlap
 * (none, 1 hour, 24 hours, 7 days at most): its `revoked_at` lies in the future until then, and the
 * authenticator refuses it from then on exactly as a revoked key. Every change is audited in the ISV's own
 * log (no tenant) with the person as actor; no secret is ever in it.
 */
import type { KeyCreator } from '../../entities';
import type { AccessService } from '../access/access.service';
import type { AuditService } from '../audit/audit.service';
import { ServiceError } from '../errors/service-error';
import { isUuid } from '../shared/request';
import type { AdminService } from './admin.service';
import type { IsvKeyHistoryRow, IsvKeyRow, IsvKeysStore } from './isv-keys.store';

/** How long a rotated key keeps working beside its successor; 7 days at most. */
export const OVERLAP_WINDOWS = [
  { value: 'none', label: 'No overlap: the old key stops now', ms: 0 },
  { value: '1h', label: '1 hour', ms: 3_600_000 },
  { value: '24h', label: '24 hours', ms: 86_400_000 },
  { value: '7d', label: '7 days', ms: 7 * 86_400_000 },
] as const;
export type OverlapWindow = (typeof OVERLAP_WINDOWS)[number]['value'];

export const isOverlapWindow = (v: string): v is OverlapWindow => OVERLAP_WINDOWS.some((w) => w.value === v);

/** Only an owner of the ISV creates, rotates and revokes its keys (an ISV's roles are owner, developer, viewer). */
export function managesKeys(role: string | null): boolean {
  return role === 'owner';
}

/** The person deciding, from their console session: the ISV, their role there, and the audit detail naming them. */
export interface KeyDecider {
  isvId: string;
  role: string | null;
  person: { id: string; email: string } | null;
  /** The session's audit detail (actor: the person; via: console), src/people/sessions.ts detailOf. */
  audit: Record<string, unknown>;
}

export type KeyState = { state: 'active' } | { state: 'expiring'; at: Date } | { state: 'revoked'; at: Date };

export interface IsvKeyView extends IsvKeyRow {
  status: KeyState;
}

export interface MintedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  view: IsvKeyView;
}

const NAME_MAX = 200;

export class IsvKeys {
  constructor(
    private readonly store: IsvKeysStore,
    private readonly admin: Pick<AdminService, 'issueApiKey'>,
    private readonly access: Pick<AccessService, 'invalidate'>,
    private readonly audit: Pick<AuditService, 'write'>,
    /** The service's clock (the one the authenticator compares a key's end with). */
    private readonly now: () => number = Date.now,
  ) {}

  stateOf(row: IsvKeyRow): KeyState {
    if (!row.revokedAt) return { state: 'active' };
    return row.revokedAt.getTime() > this.now() ? { state: 'expiring', at: row.revokedAt } : { state: 'revoked', at: row.revokedAt };
  }

  private view(row: IsvKeyRow): IsvKeyView {
    return { ...row, status: this.stateOf(row) };
  }

  async list(isvId: string): Promise<IsvKeyView[]> {
    if (!isUuid(isvId)) return [];
    return (await this.store.list(isvId)).map((r) => this.view(r));
  }

  history(isvId: string, limit = 20): Promise<IsvKeyHistoryRow[]> {
    return isUuid(isvId) ? this.store.history(isvId, limit) : Promise.resolve([]);
  }

  /** A new key named `name`, minted by the person. */
  async create(by: KeyDecider, rawName: string): Promise<MintedKey> {
    const creator = this.decider(by);
    // eslint-disable-next-line no-control-regex -- control characters are what it drops
    const name = rawName.replace(/[\u0000-\u001f\u007f]/g, '').trim();
    if (!name) throw new ServiceError('request_invalid', 'Give the key a name (what uses it: "production", "staging", a script).', { details: { field: 'name' } });
    if (name.length > NAME_MAX) throw new ServiceError('request_invalid', `A key's name is at most ${NAME_MAX} characters.`, { details: { field: 'name' } });
    const { row, key } = await this.admin.issueApiKey(by.isvId, name, creator);
    await this.write(by, 'api_key.create', row.prefix, { name, key_id: row.id });
    return { key, view: this.view(await this.mustFind(by.isvId, row.id)) };
  }

  /**
   * Rotates an active key: a new key of the same name, minted now; the old one works for `window` more,
   * then is revoked (at once with `none`). A key already ending is not rotated again.
   */
  async rotate(by: KeyDecider, keyId: string, window: string): Promise<MintedKey & { old: IsvKeyView }> {
    const creator = this.decider(by);
    if (!isOverlapWindow(window)) {
      throw new ServiceError('request_invalid', `The overlap is one of ${OVERLAP_WINDOWS.map((w) => w.value).join(', ')} (7 days at most).`, { details: { field: 'overlap' } });
    }
    const old = await this.mustFind(by.isvId, keyId);
    if (old.revokedAt) throw new ServiceError('request_invalid', `Key ${old.prefix}… is already ${this.stateOf(old).state === 'expiring' ? 'being replaced' : 'revoked'}: rotate a key that is active.`);
    const overlapMs = OVERLAP_WINDOWS.find((w) => w.value === window)!.ms;
    const { row, key } = await this.admin.issueApiKey(by.isvId, old.name, creator);
    const endsAt = new Date(this.now() + overlapMs);
    if (!(await this.store.endAt(by.isvId, old.id, endsAt, true))) {
      // Another rotation or a revoke came first: the key minted here is not handed out, and stops now.
      await this.store.endAt(by.isvId, row.id, new Date(this.now()), false);
      await this.access.invalidate();
      throw new ServiceError('request_invalid', `Key ${old.prefix}… was rotated or revoked meanwhile: nothing was rotated.`);
    }
    // Awaited: when the rotation answers, every process has dropped the old key's cached end.
    await this.access.invalidate();
    await this.write(by, 'api_key.rotate', row.prefix, {
      name: old.name, key_id: row.id, replaced: old.prefix, replaced_key_id: old.id, overlap: window, replaced_until: endsAt.toISOString(),
    });
    return { key, view: this.view(await this.mustFind(by.isvId, row.id)), old: this.view(await this.mustFind(by.isvId, old.id)) };
  }

  /** Revokes a key now (an active one, or one still in its overlap). */
  async revoke(by: KeyDecider, keyId: string): Promise<IsvKeyView> {
    this.decider(by);
    const key = await this.mustFind(by.isvId, keyId);
    if (this.stateOf(key).state === 'revoked') throw new ServiceError('request_invalid', `Key ${key.prefix}… is revoked already.`);
    await this.store.endAt(by.isvId, key.id, new Date(this.now()), false);
    // Awaited: when the revoke answers, every process has been told.
    await this.access.invalidate();
    await this.write(by, 'api_key.revoke', key.prefix, { name: key.name, key_id: key.id });
    return this.view(await this.mustFind(by.isvId, key.id));
  }

  /** The person minting or ending keys: an owner, signed in as a person. */
  private decider(by: KeyDecider): KeyCreator {
    if (!managesKeys(by.role) || !by.person) {
      throw new ServiceError('role_required', 'Only an owner of the ISV creates, rotates and revokes its keys.', { details: { role: 'owner' } });
    }
    return { kind: 'person', id: by.person.id, email: by.person.email };
  }

  private async mustFind(isvId: string, keyId: string): Promise<IsvKeyRow> {
    const row = isUuid(isvId) && isUuid(keyId) ? await this.store.one(isvId, keyId) : null;
    if (!row) throw ServiceError.notFound('Key');
    return row;
  }

  private write(by: KeyDecider, action: string, prefix: string, detail: Record<string, unknown>): Promise<void> {
    return this.audit.write({ tenantId: null, isvId: by.isvId, action, outcome: 'ok', subjectRef: prefix, detail: { ...detail, ...by.audit } });
  }
}
