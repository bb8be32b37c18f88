/**
 * Webhooks (design: the ISV's console and its API twins, "Webhooks page"; docs/architecture.md, Events
 * and webhooks): the ISV's endpoints, ISV-wide and per tenant, with their state and delivery counts; for
 * an owner or developer, add one (its secret shown once, with a Copy button), pause and resume, rotate its
 * secret with an overlap (the new secret shown once), send a test event; each endpoint's recent
 * deliveries with their next try, and a retry of any of them. Every change runs the same operation the
 * ISV's key runs over REST (src/webhooks/feature.ts) as the signed-in ISV, so nothing is decided here. A
 * create or rotate form runs once per session and form (src/pages/once-per-form.ts): a reload or a second
 * press shows the secret the first press made and never makes another.
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { withAuditDetail } from '../operations/audit-context';
import { ago, refusal } from '../console/ui';
import { notice } from '../pages/notice';
import { ServiceError } from '../errors/service-error';
import { RequestValidationError } from '../errors/request-validation-error';
import type { Operation } from '../operations/operation';
import { runOperation, type RawInput } from '../operations/runner';
import { COPY_SCRIPT, copyButton } from '../pages/copy-button';
import { field, formBody } from '../pages/forms';
import { html, type SafeHtml } from '../pages/html';
import { OncePerForm } from '../pages/once-per-form';
import { webhooksFeature } from '../webhooks/feature';
import type { Webhook } from '../../entities';
import { isvConsoleCaller, mayChange } from './msps-page';
import type { IsvConsolePage, IsvConsoleShell, SignedIsv } from './shell';

const PATH = '/app/webhooks';
const TITLE = 'Webhooks';
const OPERATIONS = new Map<string, Operation>((webhooksFeature.operations ?? []).map((op) => [op.name, op as Operation]));

/** The overlaps a rotation offers (at most 7 days, as the API allows). */
const OVERLAPS = [
  { value: 0, label: 'No overlap: the old secret stops now' },
  { value: 3600, label: '1 hour' },
  { value: 86_400, label: '1 day' },
  { value: 7 * 86_400, label: '7 days' },
];

interface HookView {
  id: string; url: string; enabled: boolean; disabled_reason: string | null; created_at: string; tenant_id: string | null;
  kinds: string[] | null; previous_secret_expires_at: string | null; deliveries: { delivered: number; failed: number; pending: number };
}
interface DeliveryView {
  id: string; event_id: string; event_kind: string | null; tenant_id: string; status: string; attempts: number; last_status_code: number | null;
  last_error: string | null; latency_ms: number | null; next_attempt_at: string | null; created_at: string;
}
interface Registered { id: string; url: string; secret: string; kinds: string[] | null }
interface Rotated { id: string; secret: string; previous_secret_expires_at: string | null }
interface TestResult { webhook_id: string; delivered: boolean; status_code: number | null; latency_ms: number; error: string | null }

/** Runs one of the webhooks operations by name as the signed-in ISV, audited as made in this console session. */
function runAsIsv<R>(shell: IsvConsoleShell, who: SignedIsv, name: string, raw: RawInput): Promise<R> {
  const op = OPERATIONS.get(name);
  if (!op) throw new Error(`no operation ${name}`);
  return withAuditDetail(shell.services.peopleSessions.detailOf(who.session), () => runOperation(op, raw, isvConsoleCaller(who), shell.services)) as Promise<R>;
}

/** The operation's name and path for an endpoint: the ISV-wide one, or the tenant's. */
function scoped(hook: Pick<Webhook, 'id' | 'tenantId'>, tenantOp: string, isvOp: string, extra: Record<string, string> = {}): { name: string; path: Record<string, string> } {
  return hook.tenantId
    ? { name: tenantOp, path: { tenant_id: hook.tenantId, webhook_id: hook.id, ...extra } }
    : { name: isvOp, path: { webhook_id: hook.id, ...extra } };
}

function at(iso: string | null): SafeHtml | string {
  if (!iso) return '—';
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function stateBadge(h: Pick<HookView, 'enabled' | 'disabled_reason'>): SafeHtml {
  if (h.enabled) return html`<span class="badge ok">active</span>`;
  return h.disabled_reason === 'paused' ? html`<span class="badge warn">paused</span>` : html`<span class="badge bad">disabled</span> ${h.disabled_reason ?? ''}`;
}

const STATUS_BADGE: Record<string, string> = { delivered: 'ok', pending: 'info', failed: 'bad', gave_up: 'bad' };

async function tenantNames(shell: IsvConsoleShell, who: SignedIsv): Promise<Map<string, string>> {
  const tenants = await shell.services.access.visibleTenants(isvConsoleCaller(who));
  return new Map(tenants.map((t) => [t.id, t.name]));
}

async function listView(shell: IsvConsoleShell, who: SignedIsv, message?: SafeHtml): Promise<SafeHtml> {
  const [rows, names] = await Promise.all([shell.services.webhooks.ofIsv(who.org.id), tenantNames(shell, who)]);
  const change = mayChange(who);
  const scopeOf = (w: Webhook) => (w.tenantId ? names.get(w.tenantId) ?? w.tenantId : 'All your tenants');
  return html`<h1>${TITLE}</h1>${message ?? ''}
<p class="lead">Endpoints that receive your events as signed Standard Webhooks. An ISV-wide endpoint receives every tenant you see, now and later; a tenant's endpoint only that tenant. Each receives what your grants on the tenant show, narrowed by its kinds.</p>
<h2 id="endpoints-heading">Endpoints</h2>
${rows.length === 0 ? html`<p>No endpoint yet.</p>` : html`<div class="table-wrap" role="region" aria-labelledby="endpoints-heading" tabindex="0"><table class="phone-cards">
<thead><tr><th scope="col">Endpoint</th><th scope="col">Receives</th><th scope="col">Kinds</th><th scope="col">State</th><th scope="col">Deliveries</th></tr></thead>
<tbody>${rows.map(({ webhook: w, deliveries: d }) => html`<tr>
<td data-label="Endpoint"><a href="${PATH}/${w.id}">${w.url}</a></td>
<td data-label="Receives">${scopeOf(w)}</td>
<td data-label="Kinds">${w.kinds ? w.kinds.join(', ') : 'every kind granted'}</td>
<td data-label="State">${stateBadge({ enabled: w.enabled, disabled_reason: w.disabledReason })}</td>
<td data-label="Deliveries">${d.delivered} delivered, ${d.pending} pending, ${d.failed} failed</td></tr>`)}</tbody></table></div>`}
${change ? html`<section class="card" aria-labelledby="add-heading"><h2 id="add-heading">Add an endpoint</h2>
<form method="post" action="${PATH}/create" class="stack">${shell.csrfField(who)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<div><label for="hook_url">Receiver URL</label><p class="hint" id="hook_url_hint">HTTPS, on a public address.</p>
<input id="hook_url" name="url" type="url" required maxlength="2048" autocomplete="off" aria-describedby="hook_url_hint"></div>
<div><label for="hook_scope">Receives</label>
<select id="hook_scope" name="scope"><option value="isv" selected>All your tenants, now and later</option>${[...names].map(([id, name]) => html`<option value="${id}">${name} only</option>`)}</select></div>
<div><label for="hook_kinds">Kinds (optional)</label><p class="hint" id="hook_kinds_hint">Comma-separated event kinds or families, e.g. <code>ticket, connection</code>. Empty: every kind your grants cover.</p>
<input id="hook_kinds" name="kinds" type="text" maxlength="2000" autocomplete="off" aria-describedby="hook_kinds_hint"></div>
<button type="submit">Add the endpoint</button></form></section>` : html`<p>Your role (${who.session.role}) reads endpoints; an owner or developer changes them.</p>`}`;
}

async function endpointView(shell: IsvConsoleShell, who: SignedIsv, hook: Webhook, message?: SafeHtml): Promise<SafeHtml> {
  const get = scoped(hook, 'get_webhook', 'get_isv_webhook');
  const log = scoped(hook, 'list_webhook_deliveries', 'list_isv_webhook_deliveries');
  const [h, page, names] = await Promise.all([
    runAsIsv<HookView>(shell, who, get.name, { path: get.path, query: {} }),
    runAsIsv<{ deliveries: DeliveryView[] }>(shell, who, log.name, { path: log.path, query: { limit: '25' } }),
    tenantNames(shell, who),
  ]);
  const change = mayChange(who);
  const base = `${PATH}/${hook.id}`;
  const csrf = shell.csrfField(who);
  return html`<p><a href="${PATH}">All endpoints</a></p><h1>Endpoint</h1>${message ?? ''}
<dl class="card"><dt>URL</dt><dd><code>${h.url}</code></dd>
<dt>Receives</dt><dd>${h.tenant_id ? names.get(h.tenant_id) ?? h.tenant_id : 'All your tenants, now and later'}</dd>
<dt>Kinds</dt><dd>${h.kinds ? h.kinds.join(', ') : 'every kind your grants cover'}</dd>
<dt>State</dt><dd>${stateBadge(h)}</dd>
${h.previous_secret_expires_at ? html`<dt>Secret rotation</dt><dd>The old secret still signs until ${at(h.previous_secret_expires_at)}.</dd>` : ''}</dl>
${change ? html`<section class="card" aria-labelledby="actions-heading"><h2 id="actions-heading">Actions</h2><div class="row">
<form method="post" action="${base}/${h.enabled ? 'pause' : 'resume'}">${csrf}<button type="submit" class="secondary">${h.enabled ? 'Pause' : 'Resume'}</button></form>
<form method="post" action="${base}/test">${csrf}<button type="submit" class="secondary">Send a test event</button></form></div>
<p class="hint">While paused the endpoint receives nothing: events of that time are never sent to it, and deliveries still pending are marked failed (retry them once resumed).</p>
<form method="post" action="${base}/rotate" class="stack">${csrf}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<div><label for="overlap">Keep the old secret signing for</label><p class="hint" id="overlap_hint">Meanwhile every delivery carries both signatures, so your receiver can switch without missing one.</p>
<select id="overlap" name="overlap_seconds" aria-describedby="overlap_hint">${OVERLAPS.map((o) => html`<option value="${String(o.value)}"${o.value === 86_400 ? html` selected` : ''}>${o.label}</option>`)}</select></div>
<button type="submit">Rotate the secret</button></form></section>` : ''}
<h2 id="deliveries-heading">Recent deliveries</h2>
${page.deliveries.length === 0 ? html`<p>No delivery yet.</p>` : html`<div class="table-wrap" role="region" aria-labelledby="deliveries-heading" tabindex="0"><table class="phone-cards">
<thead><tr><th scope="col">Event</th>${h.tenant_id ? '' : html`<th scope="col">Tenant</th>`}<th scope="col">Status</th><th scope="col">Tries</th><th scope="col">Response</th><th scope="col">Latency</th><th scope="col">Next try</th>${change ? html`<th scope="col"><span class="visually-hidden">Retry</span></th>` : ''}</tr></thead>
<tbody>${page.deliveries.map((d) => html`<tr>
<td data-label="Event"><code>${d.event_kind ?? 'event'}</code> <span class="hint">${ago(d.created_at)}</span></td>
${h.tenant_id ? '' : html`<td data-label="Tenant">${names.get(d.tenant_id) ?? d.tenant_id}</td>`}
<td data-label="Status"><span class="badge ${STATUS_BADGE[d.status] ?? 'info'}">${d.status.replace('_', ' ')}</span></td>
<td data-label="Tries">${String(d.attempts)}</td>
<td data-label="Response">${d.last_status_code !== null ? String(d.last_status_code) : d.last_error ?? '—'}</td>
<td data-label="Latency">${d.latency_ms !== null ? `${d.latency_ms} ms` : '—'}</td>
<td data-label="Next try">${at(d.next_attempt_at)}</td>
${change ? html`<td><form method="post" action="${base}/deliveries/${d.id}/retry">${csrf}<button type="submit" class="secondary" aria-label="Retry the ${d.event_kind ?? 'event'} delivery of ${d.created_at}">Retry</button></form></td>` : ''}</tr>`)}</tbody></table></div>`}`;
}

/** The secret shown once, with its Copy button. */
function secretView(title: string, secret: string, repeated: boolean, back: string, extra: SafeHtml | string = ''): SafeHtml {
  return html`<h1>${title}</h1>
${repeated ? notice('info', 'This form was sent before: this is the secret it made then. Nothing was made again.') : notice('ok', 'Done.')}
${extra}<p>Copy the signing secret now: it is not shown again once you leave this page. Verify each delivery's <code>webhook-signature</code> with it (any Standard Webhooks library does).</p>
<p><code class="secret" id="new-secret">${secret}</code></p>
<p>${copyButton('new-secret', 'Copy the secret')}</p>
<p><a href="${back}">Done</a></p>`;
}

function kindsOfField(value: string): string[] | undefined {
  const kinds = value.split(/[\s,]+/).map((k) => k.trim()).filter(Boolean);
  return kinds.length > 0 ? kinds : undefined;
}

export const webhooksPage: IsvConsolePage = {
  nav: { href: PATH, label: TITLE },
  register(router, shell) {
    const kit = webhooksPageKit(shell);
    mountEndpointList(router, kit);
    mountEndpointActions(router, kit);
    mountSecretRotation(router, kit);
  },
};

type WebhooksPageKit = ReturnType<typeof webhooksPageKit>;

/** What the page's routes share: how a page is sent, a refusal told, and a form post admitted. */
function webhooksPageKit(shell: IsvConsoleShell) {
  const send = (res: Response, who: SignedIsv, main: SafeHtml, status = 200, scripts: string[] = []) =>
    res.status(status).type('html').send(shell.page(who, PATH, TITLE, main, scripts));

  /** A refusal of the rules, told on the page it came from. */
  const refused = async (res: Response, who: SignedIsv, err: unknown, hook: Webhook | null) => {
    const r = refusal(err);
    if (!r || !(err instanceof ServiceError || err instanceof RequestValidationError)) throw err;
    send(res, who, hook ? await endpointView(shell, who, hook, notice('bad', r.message)) : await listView(shell, who, notice('bad', r.message)), r.status);
  };

  /**
   * The signed-in owner or developer of a form post whose CSRF token is this session's; null with the
   * answer sent (a viewer reads endpoints and changes none).
   */
  const signedPost = async (req: Request, res: Response): Promise<SignedIsv | null> => {
    const who = await shell.signedForm(req, res);
    if (!who) return null;
    if (!mayChange(who)) {
      send(res, who, await listView(shell, who, notice('bad', `Your role (${who.session.role}) reads endpoints; an owner or developer changes them.`)), 403);
      return null;
    }
    return who;
  };

  const notFound = (res: Response, who: SignedIsv) => send(res, who, html`<h1>Not found</h1><p>No endpoint of yours has that id.</p><p><a href="${PATH}">All endpoints</a></p>`, 404);
  const outOfDate = (res: Response, who: SignedIsv) =>
    send(res, who, html`<h1>${TITLE}</h1>${notice('warn', 'Nothing changed: this form is out of date. Open the webhooks page again.')}<p><a href="${PATH}">Back to the webhooks</a></p>`, 422);

  /** A post about one endpoint of the ISV: the person, the endpoint, or null with the answer sent. */
  const endpointPost = async (req: Request, res: Response): Promise<{ who: SignedIsv; hook: Webhook } | null> => {
    const who = await signedPost(req, res);
    if (!who) return null;
    const hook = await shell.services.webhooks.findOfIsv(who.org.id, String(req.params.id));
    if (!hook) {
      notFound(res, who);
      return null;
    }
    return { who, hook };
  };

  return { shell, send, refused, signedPost, notFound, outOfDate, endpointPost };
}

/** The list of endpoints, and adding one (its secret shown once). */
function mountEndpointList(router: Router, { shell, send, refused, signedPost, outOfDate }: WebhooksPageKit): void {
  const created = new OncePerForm<Registered>();
  router.get(PATH, async (req, res) => {
    const who = await shell.signed(req, res);
    if (!who) return;
    send(res, who, await listView(shell, who));
  });

  router.post(`${PATH}/create`, formBody, async (req, res) => {
    const who = await signedPost(req, res);
    if (!who) return;
    const formKey = field(req.body, 'idempotency_key');
    if (!formKey) return outOfDate(res, who);
    try {
      const scope = field(req.body, 'scope');
      const body = { url: field(req.body, 'url'), kinds: kindsOfField(field(req.body, 'kinds')) };
      const { value, repeated } = await created.run(who.session.id, formKey, () => (scope && scope !== 'isv'
        ? runAsIsv<Registered>(shell, who, 'register_webhook', { path: { tenant_id: scope }, body })
        : runAsIsv<Registered>(shell, who, 'register_isv_webhook', { body })));
      send(res, who, secretView('Endpoint added', value.secret, repeated, `${PATH}/${value.id}`, html`<p>Deliveries go to <code>${value.url}</code>.</p>`), 201, [COPY_SCRIPT]);
    } catch (err) {
      await refused(res, who, err, null);
    }
  });
}

/** One endpoint: its page, pause and resume, a test event, and a retry of any of its deliveries. */
function mountEndpointActions(router: Router, { shell, send, refused, notFound, endpointPost }: WebhooksPageKit): void {
  router.get(`${PATH}/:id`, async (req, res) => {
    const who = await shell.signed(req, res);
    if (!who) return;
    const hook = await shell.services.webhooks.findOfIsv(who.org.id, String(req.params.id));
    if (!hook) return notFound(res, who);
    send(res, who, await endpointView(shell, who, hook));
  });

  for (const [action, enabled] of [['pause', false], ['resume', true]] as const) {
    router.post(`${PATH}/:id/${action}`, formBody, async (req, res) => {
      const got = await endpointPost(req, res);
      if (!got) return;
      const { who, hook } = got;
      try {
        const op = scoped(hook, 'update_webhook', 'update_isv_webhook');
        await runAsIsv(shell, who, op.name, { path: op.path, body: { enabled } });
        send(res, who, await endpointView(shell, who, hook, notice('ok', enabled ? 'Resumed: events from now on are delivered.' : 'Paused: nothing is delivered until you resume it.')));
      } catch (err) {
        await refused(res, who, err, hook);
      }
    });
  }

  router.post(`${PATH}/:id/test`, formBody, async (req, res) => {
    const got = await endpointPost(req, res);
    if (!got) return;
    const { who, hook } = got;
    try {
      const op = scoped(hook, 'test_webhook', 'test_isv_webhook');
      const r = await runAsIsv<TestResult>(shell, who, op.name, { path: op.path });
      const message = r.delivered
        ? notice('ok', html`Test event <code>${r.webhook_id}</code> delivered: HTTP ${String(r.status_code)} in ${String(r.latency_ms)} ms.`)
        : notice('bad', html`Test event <code>${r.webhook_id}</code> not delivered: ${r.error ?? `HTTP ${String(r.status_code)}`}.`);
      send(res, who, await endpointView(shell, who, hook, message));
    } catch (err) {
      await refused(res, who, err, hook);
    }
  });

  router.post(`${PATH}/:id/deliveries/:delivery/retry`, formBody, async (req, res) => {
    const got = await endpointPost(req, res);
    if (!got) return;
    const { who, hook } = got;
    try {
      const op = scoped(hook, 'retry_webhook_delivery', 'retry_isv_webhook_delivery', { delivery_id: String(req.params.delivery) });
      await runAsIsv(shell, who, op.name, { path: op.path });
      send(res, who, await endpointView(shell, who, hook, notice('ok', 'Sent again: the delivery is pending and is tried now, with the same webhook-id.')));
    } catch (err) {
      await refused(res, who, err, hook);
    }
  });
}

/** Rotating an endpoint's secret with an overlap (the new secret shown once). */
function mountSecretRotation(router: Router, { shell, send, refused, outOfDate, endpointPost }: WebhooksPageKit): void {
  const rotated = new OncePerForm<Rotated>();
  router.post(`${PATH}/:id/rotate`, formBody, async (req, res) => {
    const got = await endpointPost(req, res);
    if (!got) return;
    const { who, hook } = got;
    const formKey = field(req.body, 'idempotency_key');
    if (!formKey) return outOfDate(res, who);
    try {
      const op = scoped(hook, 'rotate_webhook_secret', 'rotate_isv_webhook_secret');
      const overlap = Number(field(req.body, 'overlap_seconds') || '0');
      const { value, repeated } = await rotated.run(who.session.id, `${hook.id}\u0000${formKey}`, () =>
        runAsIsv<Rotated>(shell, who, op.name, { path: op.path, body: { overlap_seconds: overlap } }));
      const old = value.previous_secret_expires_at
        ? html`<p>The old secret keeps signing beside the new one until ${at(value.previous_secret_expires_at)}; then only the new one signs.</p>`
        : html`<p>The old secret stopped signing now.</p>`;
      send(res, who, secretView('Secret rotated', value.secret, repeated, `${PATH}/${hook.id}`, old), 200, [COPY_SCRIPT]);
    } catch (err) {
      await refused(res, who, err, hook);
    }
  });
}

