/**
 * What the console needs of the service graph, in one place (so a change to how features receive
 * services touches only this file): the sign-in store, the authorisation module, the per-key and
 * failed-sign-in limits, and running an operation as the signed-in MSP (docs/architecture.md, Connect
 * sessions and console). Every operation a page runs goes through `runOperation` with the tenant's MSP
 * caller, inside an audit context naming the console session, so the audit log records the decision as
 * the MSP's, made in the console.
 */
import type { Response } from 'express';
import type { AccessService } from '../access/access.service';
import type { RateLimits } from '../access/rate-limit';
import type { AuditService } from '../audit/audit.service';
import { apiKeyOf, type Caller } from '../access/caller';
import { ServiceError } from '../errors/service-error';
import { withAuditDetail } from '../operations/audit-context';
import type { Operation } from '../operations/operation';
import { runOperation, type RawInput, type RunnerServices } from '../operations/runner';
import type { PeopleService } from '../people/people.service';
import type { PeopleStore } from '../people/people.store';
import type { PeopleSessions, PersonSession } from '../people/sessions';
import type { ConsoleAuth } from './console-auth';

/** What the console uses of the service graph, besides running operations (the runner hands the graph on to each). */
export interface ConsolePagesServices extends RunnerServices {
  access: AccessService;
  audit: AuditService;
  consoleAuth: ConsoleAuth;
  people: PeopleService;
  peopleSessions: PeopleSessions;
  peopleStore: PeopleStore;
  rateLimits: RateLimits;
}

export interface ConsoleDeps {
  /** One-time console links (`POST /tenants/{t}/console-links`). */
  auth: ConsoleAuth;
  /** The session layer both consoles share, and people's members rules (src/people). */
  sessions: PeopleSessions;
  people: PeopleService;
  /** Whether the tenant is a sandbox tenant (the only ones whose MSP key may be pasted to sign in). */
  isSandboxTenant(tenantId: string): Promise<boolean>;
  /** The caller of an API key (an ISV or MSP caller), or a ServiceError (`unauthenticated`, `rate_limited`). */
  callerOfKey(key: string, address: string): Promise<Caller>;
  /** The tenant's MSP caller a session acts as (with its person, for the audit log); null when the tenant has no live MSP key. */
  mspCaller(tenantId: string, person: { id: string; email: string } | null): Promise<Caller | null>;
  /** Counts a request against the caller's per-key limit (the same limit as its REST calls). */
  admit(caller: Caller, res: Response): Promise<boolean>;
  /** An audit entry of a decision the console makes itself (members), with the session's person as actor. */
  audit(session: PersonSession, action: string, detail: Record<string, unknown>): Promise<void>;
  /** Runs an operation by name as `caller`, audited as made in this console session. */
  run<R = any>(name: string, raw: RawInput, caller: Caller, session: PersonSession): Promise<R>;
}

export function consoleDeps(services: ConsolePagesServices, operations: Operation[]): ConsoleDeps {
  const byName = new Map(operations.map((op) => [op.name, op]));
  return {
    auth: services.consoleAuth,
    sessions: services.peopleSessions,
    people: services.people,
    isSandboxTenant: async (tenantId) => (await services.peopleStore.tenantIsSandbox(tenantId)),
    async callerOfKey(key, address) {
      try {
        return await services.access.authenticate(key);
      } catch (err) {
        // A wrong key counts against the address like a wrong X-API-Key does (authenticator.ts).
        const blocked = await services.rateLimits.authFailed(address);
        if (blocked !== null) throw new ServiceError('rate_limited', 'Too many failed sign-ins from this address; wait before trying again.', { retryAfterSeconds: blocked });
        throw err;
      }
    },
    async mspCaller(tenantId, person) {
      const caller = await services.access.mspCallerOf(tenantId);
      return caller && person ? { ...caller, person: { id: person.id, email: person.email } } : caller;
    },
    async admit(caller, res) {
      const key = apiKeyOf(caller);
      return key ? (await services.rateLimits.admitKey(key, res)).ok : true;
    },
    audit: (session, action, detail) => services.audit.write({ tenantId: session.organisation!.id, action, outcome: 'ok', detail: { ...detail, ...services.peopleSessions.detailOf(session) } }),
    run(name, raw, caller, session) {
      const op = byName.get(name);
      if (!op) throw new Error(`no operation ${name}`);
      return withAuditDetail(services.peopleSessions.detailOf(session), () => runOperation(op, raw, caller, services));
    },
  };
}
