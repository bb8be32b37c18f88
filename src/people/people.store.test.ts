/**
 * The people stores on the real database (both runtimes): the last-owner rule under concurrent changes,
 * single-use and expiring invitations and magic links, and sessions' idle and absolute ends.
 */
import { openDatabase, type Database } from '../db/database';
import { testDatabaseOptions } from '../../test/support/runtime';
import { PeopleStore } from './people.store';
import { SessionsStore } from './sessions.store';
import { hashOf, newToken } from './secret-tokens';
import type { Organisation } from './people.types';

let db: Database;
let store: PeopleStore;
let sessions: SessionsStore;
let org: Organisation;

beforeAll(async () => {
  db = await openDatabase(testDatabaseOptions());
  store = new PeopleStore(db.dataSource);
  sessions = new SessionsStore(db.dataSource);
  const [isv]: { id: string }[] = await db.dataSource.query("INSERT INTO isvs (name) VALUES ('Store test ISV') RETURNING id");
  org = { kind: 'isv', id: isv!.id };
}, 60_000);
afterAll(async () => { await db?.close(); });

const later = (ms: number) => new Date(Date.now() + ms);

describe('memberships', () => {
  it('keeps one owner whatever two owners do at the same time', async () => {
    const a = await store.ensurePerson('a@store.example', 'A');
    const b = await store.ensurePerson('b@store.example', 'B');
    await store.addMembership(a.id, org, 'owner');
    await store.addMembership(b.id, org, 'owner');
    // Each demotes the other at once: one of them must be refused.
    const results = await Promise.all([store.changeMember(a.id, org, 'viewer'), store.changeMember(b.id, org, 'viewer')]);
    expect(results.sort()).toEqual(['last_owner', 'ok']);
    expect((await store.members(org)).filter((m) => m.role === 'owner')).toHaveLength(1);
    const [owner] = (await store.members(org)).filter((m) => m.role === 'owner');
    expect(await store.changeMember(owner!.id, org, null)).toBe('last_owner');
    expect(await store.changeMember('00000000-0000-0000-0000-000000000000', org, 'viewer')).toBe('not_member');
  });

  it('an invitation is spent once, and not after its end', async () => {
    const token = newToken();
    await store.insertInvitation({ tokenHash: hashOf(token), email: 'a@store.example', org, role: 'viewer', invitedBy: 'test', expiresAt: later(60_000) });
    const first = await store.acceptInvitation(hashOf(token), 'A');
    expect(first?.person.email).toBe('a@store.example');
    expect(await store.acceptInvitation(hashOf(token), 'A')).toBeNull();
    const expired = newToken();
    await store.insertInvitation({ tokenHash: hashOf(expired), email: 'c@store.example', org, role: 'viewer', invitedBy: 'test', expiresAt: later(-1000) });
    expect(await store.openInvitation(hashOf(expired))).toBeNull();
    expect(await store.acceptInvitation(hashOf(expired), 'C')).toBeNull();
    expect(await store.personByEmail('c@store.example')).toBeNull();
  });
});

describe('magic links and sessions', () => {
  it('a magic link is spent once, and not after its end', async () => {
    const p = await store.ensurePerson('m@store.example', 'M');
    const token = newToken();
    await store.insertSignInLink(hashOf(token), p.id, later(60_000));
    const [one, two] = await Promise.all([store.redeemSignInLink(hashOf(token)), store.redeemSignInLink(hashOf(token))]);
    expect([one, two].filter(Boolean)).toEqual([p.id]);
    const old = newToken();
    await store.insertSignInLink(hashOf(old), p.id, later(-1));
    expect(await store.redeemSignInLink(hashOf(old))).toBeNull();
  });

  it('a session ends when idle, past its absolute end, or for everyone at once', async () => {
    const p = await store.ensurePerson('s@store.example', 'S');
    const start = async (expiresAt: Date) => {
      const t = newToken();
      await sessions.insertSession({ tokenHash: hashOf(t), csrfToken: newToken(), personId: p.id, organisation: org, role: 'viewer', signedInWith: 'magic_link', expiresAt });
      return hashOf(t);
    };
    const live = await start(later(3600_000));
    expect((await sessions.touch(live, 3600_000))?.role).toBe('viewer');
    const pastEnd = await start(later(-1));
    expect(await sessions.touch(pastEnd, 3600_000)).toBeNull();
    await db.dataSource.query("UPDATE person_sessions SET last_seen_at = now() - interval '2 hours' WHERE token_hash = $1", [live]);
    expect(await sessions.touch(live, 3600_000)).toBeNull();
    const a = await start(later(3600_000));
    const b = await start(later(3600_000));
    expect(await sessions.endAllOf(p.id)).toBeGreaterThanOrEqual(2);
    expect(await sessions.touch(a, 3600_000)).toBeNull();
    expect(await sessions.touch(b, 3600_000)).toBeNull();
  });
});
