/**
 * The web interface's one script (served by ./assets.ts under a hashed path; CSP script-src
 * 'self'): an enhancement only, every page reads fully without it. A file view's line numbers
 * are `#L{n}` links (the row is highlighted by CSS :target without any script); with it, a
 * shift-click on a second number marks the range `#L{a}-L{b}`, and a range in the address (a
 * link someone shared) is highlighted and scrolled to. A conversation shows its comments a page
 * at a time: an address naming a comment or review that is not on the page opened
 * (`#issuecomment-N`, `#pullrequestreview-N`: html_urls) asks for the page holding it
 * (`?comment=N`, `?review=N`).
 */
export const SCRIPT = `(function () {
  'use strict';
  var MAX_ROWS = 100000;
  var anchor = null;
  function range() {
    var m = /^#L(\\d+)(?:-L(\\d+))?$/.exec(location.hash);
    if (!m) return null;
    var a = Number(m[1]), b = m[2] ? Number(m[2]) : a;
    return a <= b ? [a, b] : [b, a];
  }
  function mark() {
    var old = document.querySelectorAll('table.lines tr.selected');
    for (var i = 0; i < old.length; i++) old[i].classList.remove('selected');
    var r = range();
    if (!r) return;
    anchor = r[0];
    for (var n = r[0]; n <= r[1] && n < r[0] + MAX_ROWS; n++) {
      var row = document.getElementById('L' + n);
      if (!row) break;
      row.classList.add('selected');
    }
    var first = document.getElementById('L' + r[0]);
    if (first && r[1] > r[0] && first.scrollIntoView) first.scrollIntoView({ block: 'center' });
  }
  document.addEventListener('click', function (e) {
    var link = e.target && e.target.closest ? e.target.closest('table.lines td.num a') : null;
    if (!link) return;
    var n = Number((link.getAttribute('href') || '').slice(2));
    if (!n) return;
    if (e.shiftKey && anchor) {
      e.preventDefault();
      var lo = Math.min(anchor, n), hi = Math.max(anchor, n);
      history.replaceState(null, '', '#L' + lo + (hi > lo ? '-L' + hi : ''));
      var keep = anchor;
      mark();
      anchor = keep;
    } else {
      anchor = n;
      // The browser moves to the row itself; the class follows on hashchange.
    }
  });
  function findComment() {
    var m = /^#(issuecomment|pullrequestreview)-(\\d+)$/.exec(location.hash);
    if (!m || document.getElementById(location.hash.slice(1)) || !document.querySelector('.conversation')) return;
    var name = m[1] === 'issuecomment' ? 'comment' : 'review';
    var query = new URLSearchParams(location.search);
    if (query.get(name) === m[2]) return;
    query.delete('page');
    query.delete('comment');
    query.delete('review');
    query.set(name, m[2]);
    location.replace(location.pathname + '?' + query.toString() + location.hash);
  }
  function start() {
    mark();
    findComment();
  }
  window.addEventListener('hashchange', function () {
    mark();
    findComment();
  });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
`
