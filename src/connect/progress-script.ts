/**
 * The completion page's one script, served from /assets (the CSP allows no inline script): it polls the
 * first sync's progress (bounded: at most 20 minutes), fills the table in place and says when it is done
 * in a polite live region. Without it the page's "Refresh progress" link shows the same table.
 */
export const PROGRESS_SCRIPT = `(function () {
  var box = document.getElementById('progress');
  if (!box) return;
  var url = box.getAttribute('data-progress-url');
  var redirect = box.getAttribute('data-redirect');
  var auto = box.getAttribute('data-auto-redirect') === 'true';
  var words = { waiting: 'Waiting', running: 'Reading\\u2026', done: 'Done', failed: 'Failed' };
  var tries = 0;
  var state = document.getElementById('sync-state');
  if (state && state.textContent !== 'The first sync has finished.') state.textContent = 'Reading your systems\u2026 this page updates by itself.';
  function show(p) {
    p.connections.forEach(function (c) {
      c.resources.forEach(function (r) {
        var row = box.querySelector('tr[data-connection="' + c.id + '"][data-resource="' + r.resource + '"]');
        if (!row) return;
        row.querySelector('.records').textContent = String(r.records);
        row.querySelector('.status').textContent = words[r.status] || r.status;
      });
    });
    if (p.done) {
      document.getElementById('sync-state').textContent = 'The first sync has finished.';
      var more = document.getElementById('refresh-progress');
      if (more) more.hidden = true;
      var next = document.getElementById('continue');
      if (next) next.hidden = false;
      if (redirect && auto) window.location.assign(redirect);
    }
    return p.done;
  }
  function poll() {
    tries++;
    fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (p) { if (!(p && show(p)) && tries < 1200) setTimeout(poll, 1000); })
      .catch(function () { if (tries < 1200) setTimeout(poll, 2000); });
  }
  poll();
})();
`;
