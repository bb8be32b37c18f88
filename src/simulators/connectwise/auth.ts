/**
 * ConnectWise API-member authentication: `Authorization: Basic base64("<companyId>+<publicKey>:<privateKey>")`
 * plus a `clientId` header (the integration's registered GUID). The companyId selects the dataset.
 */
import { CwError } from './errors';

/** The public sandbox development credentials (README). */
export const SANDBOX_CREDENTIALS = {
  companyId: 'sandbox',
  publicKey: 'sandbox-public',
  privateKey: 'sandbox-private',
  clientId: '00000000-0000-0000-0000-000000000000',
} as const;

/** A second public development API member, whose security role lacks Service Tickets: Add (security-roles.ts). */
export const LIMITED_MEMBER_KEYS = { publicKey: 'sandbox-limited-public', privateKey: 'sandbox-limited-private' } as const;

/** companyId -> instance (tenant slug). An instance's own name is accepted as its companyId too. */
const COMPANY_INSTANCES: Record<string, string> = { sandbox: 'sandbox-alpha' };

function unauthorized(message: string): CwError {
  return new CwError(401, 'Unauthorized', message);
}

/** The instance the request's credentials select, or a 401 in ConnectWise's shape. */
export function authenticate(
  authorization: string | undefined,
  clientId: string | undefined,
  knownInstances: { has(instance: string): boolean },
): string {
  const m = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (!m) throw unauthorized('Authorization header with Basic credentials is required.');
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const privateKey = colon < 0 ? '' : decoded.slice(colon + 1);
  const plus = user.indexOf('+');
  const companyId = plus < 0 ? '' : user.slice(0, plus);
  const publicKey = plus < 0 ? user : user.slice(plus + 1);

  const instance = COMPANY_INSTANCES[companyId.toLowerCase()] ?? companyId.toLowerCase();
  if (!companyId || !knownInstances.has(instance)) throw unauthorized(`Company '${companyId}' could not be found.`);
  if (!(publicKey === SANDBOX_CREDENTIALS.publicKey && privateKey === SANDBOX_CREDENTIALS.privateKey)
    && !(publicKey === LIMITED_MEMBER_KEYS.publicKey && privateKey === LIMITED_MEMBER_KEYS.privateKey)) {
    throw unauthorized('The public and private key combination is not valid.');
  }
  // Real ConnectWise rejects calls without a registered clientId; the sandbox has exactly one.
  if (!clientId) throw unauthorized('A clientId header is required. Register one at developer.connectwise.com/ClientID.');
  if (clientId.toLowerCase() !== SANDBOX_CREDENTIALS.clientId) throw unauthorized(`clientId '${clientId}' is not registered.`);
  return instance;
}
