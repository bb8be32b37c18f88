/**
 * Standard Webhooks signing (docs/architecture.md, Events and webhooks): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the base64 secret after `whsec_`.
 * Node's own HMAC, with the key decoded once per lane pass rather than once per try: the reference
 * library hashes in JavaScript, which was the largest cost of a try after the HTTP exchange itself.
 * signing.test.ts holds it to the reference library's signatures, byte for byte.
 * During a secret rotation's overlap a delivery carries two signatures, space-separated (Standard
 * Webhooks allows several): the new secret's first, then the replaced one's, until the overlap ends.
 */
import { createHmac } from 'node:crypto';
import type { SecretBox } from '../security/secret-box';

const SECRET_PREFIX = 'whsec_';

export class WebhookSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (this.key.length === 0) throw new Error('A webhook secret cannot be empty.');
  }

  /** The `webhook-signature` (and `Service-Signature`) value for this id, time and body. */
  sign(id: string, at: Date, body: string): string {
    const timestamp = Math.floor(at.getTime() / 1000);
    return `v1,${createHmac('sha256', this.key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
  }
}

/** A secret and, for one a rotation replaced, until when it still signs (null: the current secret). */
export interface SigningSecret {
  secret: string;
  until: Date | null;
}

/** Signs with every secret still in force: the current one, and a replaced one during its overlap. */
export class WebhookSigners {
  private readonly signers: { signer: WebhookSigner; until: number | null }[];

  constructor(secrets: readonly SigningSecret[]) {
    this.signers = secrets.map((s) => ({ signer: new WebhookSigner(s.secret), until: s.until ? s.until.getTime() : null }));
  }

  /** The `webhook-signature` value at `at`: one `v1,` signature per secret in force then, space-separated. */
  sign(id: string, at: Date, body: string): string {
    const t = at.getTime();
    return this.signers.filter((s) => s.until === null || t < s.until).map((s) => s.signer.sign(id, at, body)).join(' ');
  }
}

/** The stored secrets of a webhook (entities/activity.ts, Webhook), as the lanes and the test send read them. */
export interface StoredSecrets {
  secretEncrypted: string;
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | string | null;
}

/** The webhook's signers now: its secret, and the one a rotation replaced while its overlap lasts. */
export function signersOf(box: Pick<SecretBox, 'open'>, hook: StoredSecrets): WebhookSigners {
  const secrets: SigningSecret[] = [{ secret: box.open(hook.secretEncrypted), until: null }];
  const until = hook.previousSecretExpiresAt ? new Date(hook.previousSecretExpiresAt) : null;
  if (hook.previousSecretEncrypted && until && until.getTime() > Date.now()) {
    secrets.push({ secret: box.open(hook.previousSecretEncrypted), until });
  }
  return new WebhookSigners(secrets);
}
