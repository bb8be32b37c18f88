/**
 * What the console needs of the service graph, in one place (so a change to how features receive
 * services touches only this file): the sign-in store, the authorisation module, the per-key and
 * failed-sign-in limits, and running an operation as the signed-in MSP (docs/architecture.md, Connect
 * sessions and console). Every operation a page runs goes through `runOperation` with the tenant's MSP
 * caller, inside an audit context naming the console session, so the audit log records the decision as
 * the MSP's, made in the console.
 */
import type { Response } from 'express';
import { apiKeyOf, type Caller } from '../access/caller';
import { ServiceError } from '../errors/service-error';
import { withAuditDetail } from '../audit/audit-context';
import type { Operation } from '../operations/operation';
import { runOperation, type RawInput } from '../operations/runner';
import type { Services } from '../services';
import type { ConsoleAuth, ConsoleSessionInfo } from './console-auth';

export interface ConsoleDeps {
  auth: ConsoleAuth;
  publicUrl: string;
  /** The caller of an API key (an ISV or MSP caller), or a ServiceError (`unauthenticated`, `rate_limited`). */
  callerOfKey(key: string, address: string): Promise<Caller>;
  /** The tenant's MSP caller a session acts as; null when the tenant has no live MSP key. */
  mspCaller(tenantId: string): Promise<Caller | null>;
  /** Counts a request against the caller's per-key limit (the same limit as its REST calls). */
  admit(caller: Caller, res: Response): Promise<boolean>;
  /** An audit entry of the console itself (sign-in, sign-out). */
  audit(tenantId: string, action: string, detail: Record<string, unknown>): Promise<void>;
  /** Runs an operation by name as `caller`, audited as made in this console session. */
  run<R = any>(name: string, raw: RawInput, caller: Caller, session: ConsoleSessionInfo): Promise<R>;
}

export function consoleDeps(services: Services, operations: Operation[]): ConsoleDeps {
  const byName = new Map(operations.map((op) => [op.name, op]));
  return {
    auth: services.consoleAuth,
    publicUrl: services.config.publicUrl,
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
    mspCaller: (tenantId) => services.access.mspCallerOf(tenantId),
    async admit(caller, res) {
      const key = apiKeyOf(caller);
      return key ? (await services.rateLimits.admitKey(key, res)).ok : true;
    },
    audit: (tenantId, action, detail) => services.audit.write({ tenantId, action, outcome: 'ok', detail }),
    run(name, raw, caller, session) {
      const op = byName.get(name);
      if (!op) throw new Error(`no operation ${name}`);
      return withAuditDetail({ via: 'console', console_session: session.id, decided_by: 'msp' }, () => runOperation(op, raw, caller, services));
    },
  };
}
