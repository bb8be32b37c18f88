/**
 * The statements of people, memberships, invitations and magic links (docs/architecture.md, People).
 * Tokens are stored only as SHA-256; spending one is a single UPDATE, so two clicks cannot both use it.
 * The last-owner rule is decided here under a lock on the organisation's owners, so two owners demoting
 * each other at once cannot leave it with none.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Membership, Organisation, OrgKind, Person } from './people.types';

interface MembershipRaw { person_id: string; org_kind: OrgKind; org_id: string; role: string; name: string | null }
const toMembership = (r: MembershipRaw): Membership => ({ personId: r.person_id, organisation: { kind: r.org_kind, id: r.org_id }, role: r.role, name: r.name ?? '' });

/** Organisations' names, from whichever table holds them. */
const ORG_NAME = `COALESCE((SELECT i.name FROM isvs i WHERE m.org_kind = 'isv' AND i.id = m.org_id), (SELECT t.name FROM tenants t WHERE m.org_kind = 'tenant' AND t.id = m.org_id))`;

/** The table of each kind of organisation (constants: never a caller's text in SQL). */
const ORG_TABLE: Record<OrgKind, string> = { isv: 'isvs', tenant: 'tenants' };

export interface MemberRow extends Person { role: string; since: Date }
export interface InvitationRow { id: string; email: string; role: string; expiresAt: Date }
export type RoleChange = 'ok' | 'not_member' | 'last_owner';

export class PeopleStore {
  constructor(private readonly ds: DataSource) {}

  async personByEmail(email: string): Promise<Person | null> {
    const rows: Person[] = await this.ds.query('SELECT id, email, name FROM people WHERE email = $1', [email]);
    return rows[0] ?? null;
  }

  async personById(id: string): Promise<Person | null> {
    const rows: Person[] = await this.ds.query('SELECT id, email, name FROM people WHERE id = $1', [id]);
    return rows[0] ?? null;
  }

  /** The person of an email, created when absent (a name given later does not overwrite a kept one). */
  async ensurePerson(email: string, name: string, manager: EntityManager = this.ds.manager): Promise<Person> {
    const rows: Person[] = await manager.query(
      `INSERT INTO people (email, name) VALUES ($1, $2)
       ON CONFLICT (email) DO UPDATE SET name = CASE WHEN people.name = '' THEN EXCLUDED.name ELSE people.name END
       RETURNING id, email, name`, [email, name]);
    return rows[0]!;
  }

  async membershipsOf(personId: string): Promise<Membership[]> {
    const rows: MembershipRaw[] = await this.ds.query(
      `SELECT m.person_id, m.org_kind, m.org_id, m.role, ${ORG_NAME} AS name FROM memberships m WHERE m.person_id = $1 ORDER BY name, m.org_id`, [personId]);
    return rows.map(toMembership);
  }

  async membership(personId: string, org: Organisation): Promise<Membership | null> {
    const rows: MembershipRaw[] = await this.ds.query(
      `SELECT m.person_id, m.org_kind, m.org_id, m.role, ${ORG_NAME} AS name FROM memberships m WHERE m.person_id = $1 AND m.org_kind = $2 AND m.org_id = $3`,
      [personId, org.kind, org.id]);
    return rows[0] ? toMembership(rows[0]) : null;
  }

  /** Adds a membership; an existing one keeps its role (an invitation never demotes). */
  async addMembership(personId: string, org: Organisation, role: string, manager: EntityManager = this.ds.manager): Promise<void> {
    await manager.query(
      'INSERT INTO memberships (person_id, org_kind, org_id, role) VALUES ($1, $2, $3, $4) ON CONFLICT (person_id, org_kind, org_id) DO NOTHING',
      [personId, org.kind, org.id, role]);
  }

  async members(org: Organisation): Promise<MemberRow[]> {
    const rows: { id: string; email: string; name: string; role: string; since: Date }[] = await this.ds.query(
      `SELECT p.id, p.email, p.name, m.role, m.created_at AS since FROM memberships m JOIN people p ON p.id = m.person_id
        WHERE m.org_kind = $1 AND m.org_id = $2 ORDER BY p.email`, [org.kind, org.id]);
    return rows;
  }

  /**
   * Sets a member's role (`role`), or removes them (`null`), unless that would leave the organisation
   * without an owner. The organisation's owner rows are locked first, so concurrent changes see each other.
   */
  async changeMember(personId: string, org: Organisation, role: string | null): Promise<RoleChange> {
    return this.ds.transaction(async (m) => {
      const owners: { person_id: string }[] = await m.query(
        "SELECT person_id FROM memberships WHERE org_kind = $1 AND org_id = $2 AND role = 'owner' ORDER BY id FOR UPDATE", [org.kind, org.id]);
      const [current]: { role: string }[] = await m.query(
        'SELECT role FROM memberships WHERE person_id = $1 AND org_kind = $2 AND org_id = $3 FOR UPDATE', [personId, org.kind, org.id]);
      if (!current) return 'not_member';
      const losesOwner = current.role === 'owner' && role !== 'owner';
      if (losesOwner && owners.filter((o) => o.person_id !== personId).length === 0) return 'last_owner';
      if (role === null) await m.query('DELETE FROM memberships WHERE person_id = $1 AND org_kind = $2 AND org_id = $3', [personId, org.kind, org.id]);
      else await m.query('UPDATE memberships SET role = $4 WHERE person_id = $1 AND org_kind = $2 AND org_id = $3', [personId, org.kind, org.id, role]);
      return 'ok';
    });
  }

  async insertInvitation(i: { tokenHash: string; email: string; org: Organisation; role: string; invitedBy: string; expiresAt: Date }): Promise<void> {
    await this.ds.query(
      'INSERT INTO invitations (token_hash, email, org_kind, org_id, role, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [i.tokenHash, i.email, i.org.kind, i.org.id, i.role, i.invitedBy, i.expiresAt]);
  }

  /** An invitation that can still be accepted (for the page that shows it), without spending it. */
  async openInvitation(tokenHash: string): Promise<{ email: string; org: Organisation; role: string; orgName: string } | null> {
    const rows: { email: string; org_kind: OrgKind; org_id: string; role: string; name: string | null }[] = await this.ds.query(
      `SELECT m.email, m.org_kind, m.org_id, m.role, ${ORG_NAME} AS name FROM invitations m
        WHERE m.token_hash = $1 AND m.used_at IS NULL AND m.expires_at > now()`, [tokenHash]);
    const r = rows[0];
    return r ? { email: r.email, org: { kind: r.org_kind, id: r.org_id }, role: r.role, orgName: r.name ?? '' } : null;
  }

  /**
   * Spends an invitation and makes its person a member, in one transaction: the person (created when
   * new) and the organisation, or null when it was used, expired or unknown.
   */
  async acceptInvitation(tokenHash: string, name: string): Promise<{ person: Person; org: Organisation } | null> {
    return this.ds.transaction(async (m) => {
      const [rows]: [{ email: string; org_kind: OrgKind; org_id: string; role: string }[], number] = await m.query(
        'UPDATE invitations SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING email, org_kind, org_id, role', [tokenHash]);
      const inv = rows[0];
      if (!inv) return null;
      const person = await this.ensurePerson(inv.email, name, m);
      const org: Organisation = { kind: inv.org_kind, id: inv.org_id };
      await this.addMembership(person.id, org, inv.role, m);
      return { person, org };
    });
  }

  async pendingInvitations(org: Organisation): Promise<InvitationRow[]> {
    const rows: { id: string; email: string; role: string; expires_at: Date }[] = await this.ds.query(
      'SELECT id, email, role, expires_at FROM invitations WHERE org_kind = $1 AND org_id = $2 AND used_at IS NULL AND expires_at > now() ORDER BY email', [org.kind, org.id]);
    return rows.map((r) => ({ id: r.id, email: r.email, role: r.role, expiresAt: r.expires_at }));
  }

  async insertSignInLink(tokenHash: string, personId: string, expiresAt: Date): Promise<void> {
    await this.ds.query('INSERT INTO sign_in_links (token_hash, person_id, expires_at) VALUES ($1, $2, $3)', [tokenHash, personId, expiresAt]);
  }

  /** Spends a magic link: its person when it was unused and unexpired, else null. */
  async redeemSignInLink(tokenHash: string): Promise<string | null> {
    const [rows]: [{ person_id: string }[], number] = await this.ds.query(
      'UPDATE sign_in_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING person_id', [tokenHash]);
    return rows[0]?.person_id ?? null;
  }

  async tenantIsSandbox(tenantId: string): Promise<boolean> {
    const rows: { sandbox: boolean }[] = await this.ds.query('SELECT sandbox FROM tenants WHERE id = $1', [tenantId]);
    return rows[0]?.sandbox === true;
  }

  /** Whether an organisation exists (an invitation names one). */
  async organisationName(org: Organisation): Promise<string | null> {
    const rows: { name: string }[] = await this.ds.query(
      `SELECT name FROM ${ORG_TABLE[org.kind]} WHERE id = $1`, [org.id]);
    return rows[0]?.name ?? null;
  }
}
