/** A notice on a page (done, a warning, a refusal, a hint): every page area tells its outcomes the same way. */
import { html, type SafeHtml } from './html';

export function notice(kind: 'ok' | 'warn' | 'bad' | 'info', text: SafeHtml | string): SafeHtml {
  return html`<div class="notice ${kind === 'info' ? '' : kind}" role="${kind === 'bad' ? 'alert' : 'status'}">${text}</div>`;
}
