/**
 * A Copy button beside a secret shown once (a new key, a webhook secret): a small script of ours at
 * /assets/copy-secret.js (the CSP allows no inline script) un-hides every such button and copies the
 * text of the element it names. Without JavaScript the button stays hidden and the secret can be
 * selected by hand.
 */
import { registerPageScript } from './assets';
import { html, type SafeHtml } from './html';

const SOURCE = `(function () {
  'use strict';
  function fallback(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    return document.execCommand('copy');
  }
  document.querySelectorAll('button[data-copy-target]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy-target'));
    var status = document.getElementById(button.getAttribute('data-copy-target') + '-copied');
    if (!target) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = target.textContent.trim();
      var done = function () { if (status) status.textContent = 'Copied.'; };
      var failed = function () { if (status) status.textContent = fallback(target) ? 'Copied.' : 'Select the text and copy it by hand.'; };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, failed);
      else failed();
    });
  });
})();
`;

/** The script's path, for a page's `scripts`. */
export const COPY_SCRIPT = registerPageScript('copy-secret', SOURCE);

/** The button (hidden until the script runs) and the polite status line it fills. */
export function copyButton(targetId: string, label: string): SafeHtml {
  return html`<button type="button" class="secondary" data-copy-target="${targetId}" hidden>${label}</button> <span id="${targetId}-copied" role="status" aria-live="polite"></span>`;
}
