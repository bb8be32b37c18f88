/**
 * The rules of people (docs/architecture.md, People): invitations (mailed links, 32 random bytes stored
 * hashed, 7 days, single use; no public sign-up), magic links (15 minutes, single use, the same answer
 * whether or not the address has an account, limited per client address and per email), and members
 * (who may manage them, which roles an organisation has, the last owner stays).
 */
import type { RateLimits } from '../access/rate-limit';
import { ServiceError } from '../errors/service-error';
import type { Mailer } from './mailer';
import type { MemberRow, InvitationRow, PeopleStore } from './people.store';
import { normalEmail, ORG_WORD, personName, plausibleEmail, ROLES, type Organisation, type Person } from './people.types';
import { hashOf, newToken, tokenShaped } from './secret-tokens';
import type { SessionsStore } from './sessions.store';
import { magicLinkRefusal } from './sign-in-extensions';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
export const MAGIC_LINK_TTL_MS = 15 * 60_000;
/** Magic-link requests a minute for one email, whoever asks (one client address has AUTH_FAILURES_PER_MINUTE). */
export const MAGIC_LINKS_PER_EMAIL = 5;

/** Who decided (the audit actor): a signed-in person, or the operator through the graph. */
export type Actor = { kind: 'person'; id: string; email: string } | { kind: 'operator'; id: string };

/**
 * Where a sign-in may send the person back to: only a page that asked them to sign in on it (a connect
 * link, docs/architecture.md, Connect sessions and console); anything else is ignored (no open redirect).
 */
export function returnPath(next: string | null | undefined): string | null {
  return next && /^\/connect\/[A-Za-z0-9_-]{43}$/.test(next) ? next : null;
}

export type MagicLinkAnswer = { sent: true } | { refused: string } | { retryAfterSeconds: number };

/** Only an owner manages members (invite, change a role, remove). */
export function managesMembers(role: string | null): boolean {
  return role === 'owner';
}

/** Whether a role changes anything in its organisation (a viewer changes nothing). */
export function changesThings(role: string | null): boolean {
  return role !== null && role !== 'viewer';
}

export class PeopleService {
  constructor(
    private readonly store: PeopleStore,
    private readonly sessions: SessionsStore,
    private readonly mailer: Mailer,
    private readonly limits: Pick<RateLimits, 'admitPage'>,
    private readonly config: { publicUrl: string; authFailuresPerMinute: number },
  ) {}

  /** Mails a sign-in link when the address belongs to a member of some organisation; the answer never says which. */
  async requestMagicLink(rawEmail: string, address: string, next: string | null = null): Promise<MagicLinkAnswer> {
    const email = normalEmail(rawEmail);
    const byAddress = await this.limits.admitPage('sign-in-address', address, this.config.authFailuresPerMinute);
    if (byAddress !== null) return { retryAfterSeconds: byAddress };
    if (!plausibleEmail(email)) return { sent: true };
    const byEmail = await this.limits.admitPage('sign-in-email', email, MAGIC_LINKS_PER_EMAIL);
    if (byEmail !== null) return { retryAfterSeconds: byEmail };
    const refused = await magicLinkRefusal(email);
    if (refused) return { refused };
    const person = await this.store.personByEmail(email);
    if (person && (await this.store.membershipsOf(person.id)).length > 0) {
      const token = newToken();
      await this.store.insertSignInLink(hashOf(token), person.id, new Date(Date.now() + MAGIC_LINK_TTL_MS));
      await this.mailer.send({
        to: person.email, subject: 'Your sign-in link',
        text: `Open this link within 15 minutes to sign in (it works once):\n\n${this.config.publicUrl}/sign-in/link/${token}${returnPath(next) ? `?next=${encodeURIComponent(returnPath(next)!)}` : ''}\n\nIf you did not ask for it, ignore this mail: nobody can sign in without it.\n`,
      });
    }
    return { sent: true };
  }

  /** Spends a magic link: its person's id, or null (used, expired, unknown alike). */
  redeemMagicLink(token: string): Promise<string | null> {
    return tokenShaped(token) ? this.store.redeemSignInLink(hashOf(token)) : Promise.resolve(null);
  }

  /**
   * Invites `email` into `org` with `role` and mails the link. The operator invites an ISV's first owner
   * (graph: `invite_member`); an owner invites from the console (`actorRole` is theirs).
   */
  async invite(org: Organisation, rawEmail: string, role: string, by: Actor, actorRole: string | null): Promise<{ email: string; role: string; expires_at: string }> {
    if (by.kind === 'person' && !managesMembers(actorRole)) throw new ServiceError('role_required', 'Only an owner invites members.', { details: { role: 'owner' } });
    const email = normalEmail(rawEmail);
    if (!plausibleEmail(email)) throw new ServiceError('request_invalid', 'That is not an email address.');
    this.checkRole(org, role);
    const orgName = await this.store.organisationName(org);
    if (orgName === null) throw ServiceError.notFound(ORG_WORD[org.kind]);
    const token = newToken();
    const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
    await this.store.insertInvitation({ tokenHash: hashOf(token), email, org, role, invitedBy: by.kind === 'person' ? by.email : 'operator', expiresAt });
    await this.mailer.send({
      to: email, subject: `You are invited to ${orgName}`,
      text: `You are invited to join ${orgName} as ${role}.\n\nAccept within 7 days (the link works once):\n\n${this.config.publicUrl}/invitations/${token}\n`,
    });
    return { email, role, expires_at: expiresAt.toISOString() };
  }

  openInvitation(token: string) {
    return tokenShaped(token) ? this.store.openInvitation(hashOf(token)) : Promise.resolve(null);
  }

  /** Spends an invitation: the person (created when new) is a member of its organisation from now on. */
  acceptInvitation(token: string, name: string): Promise<{ person: Person; org: Organisation } | null> {
    return tokenShaped(token) ? this.store.acceptInvitation(hashOf(token), personName(name)) : Promise.resolve(null);
  }

  members(org: Organisation): Promise<MemberRow[]> {
    return this.store.members(org);
  }

  pendingInvitations(org: Organisation): Promise<InvitationRow[]> {
    return this.store.pendingInvitations(org);
  }

  /**
   * Sets a member's role (or removes them with `role` null). Anyone may remove themselves (leave); only an
   * owner changes others; the last owner can neither leave nor be demoted.
   */
  async changeMember(org: Organisation, personId: string, role: string | null, actor: { personId: string | null; role: string | null }): Promise<void> {
    const leaving = role === null && actor.personId === personId;
    if (!leaving && !managesMembers(actor.role)) throw new ServiceError('role_required', 'Only an owner changes members.', { details: { role: 'owner' } });
    if (role !== null) this.checkRole(org, role);
    const result = await this.store.changeMember(personId, org, role);
    if (result === 'not_member') throw ServiceError.notFound('Member');
    if (result === 'last_owner') throw new ServiceError('request_invalid', 'This is the last owner: make someone else an owner first.');
    // A removed member's sessions there end now; a changed role applies to their next request.
    if (role === null) await this.sessions.endAllIn(personId, org);
    else await this.sessions.setRoleIn(personId, org, role);
  }

  private checkRole(org: Organisation, role: string): void {
    if (!ROLES[org.kind].includes(role)) {
      throw new ServiceError('request_invalid', `Roles here are ${ROLES[org.kind].join(', ')}.`, { allowed: [...ROLES[org.kind]] });
    }
  }
}
