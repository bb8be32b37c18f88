/**
 * The MSP key: which keys are in use, and rotating it (`rotate_msp_key`: preview, confirm, the new key
 * shown with a Copy button). The form runs once per session and idempotency key (src/pages/once-per-form.ts).
 */
import { randomUUID } from 'node:crypto';
import { COPY_SCRIPT, copyButton } from '../../pages/copy-button';
import { field } from '../../pages/forms';
import { OncePerForm } from '../../pages/once-per-form';
import { html } from '../../pages/html';
import type { ConsoleRoutes } from '../page-context';
import { ago, csrfField } from '../ui';
import { notice } from '../../pages/notice';

interface KeyInfo { id: string; prefix: string; created_at: string }

interface Rotated { key: string; revoked: KeyInfo[] }

export function registerKey(routes: ConsoleRoutes): void {
  const rotations = new OncePerForm<Rotated>();
  routes.get('/console/key', async (ctx) => {
    const preview = await ctx.run<{ current: KeyInfo[] }>('rotate_msp_key', { body: { dry_run: true } });
    ctx.send('/console/key', 'MSP key', html`<h1>MSP key</h1>
<p class="lead">Your MSP key (<code>sk_msp_…</code>) lets its holder do everything this console does, over the API. Rotate it when someone who knew it leaves or it may have leaked.</p>
<h2>In use</h2><ul>${preview.current.map((k) => html`<li><code>${k.prefix}…</code>, issued <time datetime="${k.created_at}">${ago(k.created_at)}</time></li>`)}</ul>
<form method="post" action="/console/key/rotate" class="card stack">${csrfField(ctx.session)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<p>Rotating issues a new key, shown to you once, and stops ${preview.current.length === 1 ? 'the key above' : `the ${preview.current.length} keys above`} at once: every script or integration that uses ${preview.current.length === 1 ? 'it' : 'them'} must get the new one. You stay signed in here.</p>
<label class="check" for="confirm"><input type="checkbox" id="confirm" name="confirm" value="yes" required> I understand that the current key stops working now.</label>
<button type="submit">Rotate the MSP key</button></form>`);
  });

  routes.post('/console/key/rotate', async (ctx) => {
    if (field(ctx.form, 'confirm') !== 'yes') {
      return ctx.send('/console/key', 'MSP key', html`<h1>MSP key</h1>${notice('warn', 'Nothing changed: tick the box to confirm the rotation.')}<p><a href="/console/key">Back</a></p>`, 422);
    }
    const idempotencyKey = field(ctx.form, 'idempotency_key');
    if (!idempotencyKey) {
      return ctx.send('/console/key', 'MSP key', html`<h1>MSP key</h1>${notice('warn', 'Nothing changed: this form is out of date. Open the MSP key page again.')}<p><a href="/console/key">Back</a></p>`, 422);
    }
    // A reload or a second press of the same form shows the key the first press issued; it never rotates twice.
    const { value: r, repeated } = await rotations.run(ctx.session.id, idempotencyKey, () =>
      ctx.run<Rotated>('rotate_msp_key', { body: { dry_run: false, idempotency_key: idempotencyKey } }));
    ctx.send('/console/key', 'MSP key', html`<h1>Your new MSP key</h1>
${repeated
    ? notice('info', 'Already rotated: this form was sent before, and this is the key it issued then. Nothing was rotated again.')
    : notice('ok', html`Rotated. ${r.revoked.length} old ${r.revoked.length === 1 ? 'key' : 'keys'} stopped working.`)}
<p>Copy it now: it is not shown again once you leave this page.</p><p><code class="secret" id="new-key">${r.key}</code></p>
<p>${copyButton('new-key', 'Copy the key')}</p>
<p><a href="/console/key">Done</a></p>`, 200, [COPY_SCRIPT]);
  });
}
