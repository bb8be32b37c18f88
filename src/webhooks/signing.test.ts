/** Our signer against the Standard Webhooks reference library: the same signature, and it verifies. */
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { WebhookSigner, WebhookSigners } from './signing';

describe('webhook signing', () => {
  it('signs exactly as the reference library, for any secret, id, time and body', () => {
    const bodies = ['{}', JSON.stringify({ summary: 'Drucker im 3. Stock — offline ✓', detail: { note: 'a\nb "c"' } }), JSON.stringify({ detail: 'x'.repeat(70_000) })];
    for (let i = 0; i < 50; i++) {
      const secret = `whsec_${randomBytes(24 + (i % 9)).toString('base64')}`;
      const id = randomUUID();
      const at = new Date(1_700_000_000_000 + i * 123_457);
      const body = bodies[i % bodies.length];
      const ours = new WebhookSigner(secret).sign(id, at, body);
      expect(ours).toBe(new StandardWebhook(secret).sign(id, at, body));
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': ours };
      jest.useFakeTimers({ now: at });
      try {
        expect(() => new StandardWebhook(secret).verify(body, headers)).not.toThrow();
        expect(() => new StandardWebhook(`whsec_${randomBytes(24).toString('base64')}`).verify(body, headers)).toThrow();
      } finally {
        jest.useRealTimers();
      }
    }
  });

  it('signs with both secrets during a rotation overlap (either verifies), and with the new one alone after it', () => {
    const [next, old] = [`whsec_${randomBytes(24).toString('base64')}`, `whsec_${randomBytes(24).toString('base64')}`];
    const ends = new Date(1_700_000_600_000);
    const signers = new WebhookSigners([{ secret: next, until: null }, { secret: old, until: ends }]);
    const id = randomUUID();
    const body = '{"kind":"ticket.updated"}';
    for (const [at, verifiesOld] of [[new Date(ends.getTime() - 1000), true], [ends, false]] as const) {
      const signature = signers.sign(id, at, body);
      expect(signature.split(' ')).toHaveLength(verifiesOld ? 2 : 1);
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
      jest.useFakeTimers({ now: at });
      try {
        expect(() => new StandardWebhook(next).verify(body, headers)).not.toThrow();
        if (verifiesOld) expect(() => new StandardWebhook(old).verify(body, headers)).not.toThrow();
        else expect(() => new StandardWebhook(old).verify(body, headers)).toThrow();
      } finally {
        jest.useRealTimers();
      }
    }
  });

  it('refuses an empty secret', () => {
    expect(() => new WebhookSigner('whsec_')).toThrow();
  });
});
