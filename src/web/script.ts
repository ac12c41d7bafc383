/**
 * The web interface's one script (served by ./assets.ts under a hashed path; CSP script-src
 * 'self'): an enhancement only, every page reads fully without it. A file view's lines are the
 * `#L{n}` targets (the line is marked by CSS :target without any script); with it, a click on a
 * line's number (drawn by the stylesheet in the item's left padding) marks `#L{n}`, a shift-click
 * on a second number the range `#L{a}-L{b}`, and a range in the address (a link someone shared)
 * is marked and scrolled to. A conversation shows its comments a page at a time: an address
 * naming a comment or review that is not on the page opened (`#issuecomment-N`,
 * `#pullrequestreview-N`: html_urls) asks for the page holding it (`?comment=N`, `?review=N`).
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
    var old = document.querySelectorAll('ol.lines > li.selected');
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
  /** The line whose number was clicked: a click on an item of ol.lines, left of its text. */
  function numberClicked(e) {
    var li = e.target;
    if (!li || li.tagName !== 'LI' || !li.parentNode || !li.parentNode.classList.contains('lines')) return 0;
    if (e.offsetX >= parseFloat(getComputedStyle(li).paddingLeft)) return 0;
    return Number(li.id.slice(1)) || 0;
  }
  document.addEventListener('click', function (e) {
    var n = numberClicked(e);
    if (!n) return;
    e.preventDefault();
    if (e.shiftKey && anchor) {
      var lo = Math.min(anchor, n), hi = Math.max(anchor, n);
      history.replaceState(null, '', '#L' + lo + (hi > lo ? '-L' + hi : ''));
      var keep = anchor;
      mark();
      anchor = keep;
    } else {
      anchor = n;
      // The browser marks the line (:target); the range's class follows on hashchange.
      location.hash = '#L' + n;
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
