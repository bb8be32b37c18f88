/**
 * Our own stylesheet and start script of /docs (Swagger UI from swagger-ui-dist): what Swagger UI's markup
 * lacks for WCAG 2.1 AA, fixed without touching the package (docs/architecture.md, Pages). Colours are
 * the page kit's, each at least 4.5:1 on the background it sits on.
 */
export const DOCS_CSS = `
html{background:#fff}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
.docs-top{background:#1b2a41;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
.docs-top .docs-brand{font-weight:700}
.docs-top a{color:#dbe6ff}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.swagger-ui .info .title small{background:#4f5866}
.swagger-ui .info .title small.version-stamp{background:#2f6b1f}
.swagger-ui .info .title small pre,.swagger-ui .info .title small .version{color:#fff}
.swagger-ui .info .url,.swagger-ui .info .base-url{color:#1b1f24}
.swagger-ui .info a,.swagger-ui a.nostyle,.swagger-ui .info .link{color:#0b57d0}
.swagger-ui .btn.authorize{color:#1a6b3f;border-color:#1a6b3f}
.swagger-ui .btn.authorize span{color:#1a6b3f}
.swagger-ui .btn.authorize svg{fill:#1a6b3f}
.swagger-ui .opblock .opblock-summary-method{color:#fff;text-shadow:none}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#0b57d0}
.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#1a6b3f}
.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#8a4b00}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b3261e}
.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0f6b5e}
.swagger-ui .opblock.opblock-head .opblock-summary-method,.swagger-ui .opblock.opblock-options .opblock-summary-method{background:#6b3fa0}
.swagger-ui .parameter__in,.swagger-ui .parameter__extension,.swagger-ui .prop-format{color:#566070}
.swagger-ui .json-schema-2020-12-expand-deep-button{color:#3b4350}
`;

/**
 * Starts Swagger UI, then fixes what it renders: a select without a name gets one from what it is beside,
 * a code block that scrolls gets into the keyboard's tab order (a MutationObserver, since Swagger UI renders operations as they are opened).
 */
export const DOCS_INIT = `(function () {
  // showExtensions: each operation's x-example-key and x-example-needs (what its example needs) are listed on it.
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', showExtensions: true });
  function nameOf(select) {
    var box = select.closest('.servers, .content-type-wrapper, .examples-select, .response-control-media-type, .parameters-col_description, tr, label');
    if (box && box.classList.contains('servers')) return 'Server';
    if (select.classList.contains('content-type')) return box && box.closest('.responses-inner, .responses-wrapper') ? 'Response content type' : 'Request body content type';
    if (box && box.classList.contains('examples-select')) return 'Example';
    var row = select.closest('tr');
    var param = row && row.querySelector('.parameter__name');
    if (param) return 'Value of ' + param.textContent.replace(/\\*|required/g, '').trim();
    return 'Choose a value';
  }
  function label() {
    document.querySelectorAll('#ui select:not([aria-label]):not([aria-labelledby])').forEach(function (select) {
      select.setAttribute('aria-label', nameOf(select));
    });
    // Code blocks (examples, responses) scroll sideways: keyboard users must be able to reach them.
    document.querySelectorAll('#ui pre:not([tabindex])').forEach(function (pre) { pre.setAttribute('tabindex', '0'); });
  }
  new MutationObserver(label).observe(document.getElementById('ui'), { childList: true, subtree: true });
})();
`;
