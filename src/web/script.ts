/**
 * The web interface's one script (served by ./assets.ts under a hashed path; CSP script-src
 * 'self'): an enhancement only, every page reads fully without it. A file view's lines are the
 * `#L{n}` targets (the line is marked by CSS :target without any script); with it, a click on a
 * line's number (drawn by the stylesheet in the item's left padding) marks `#L{n}`, a shift-click
 * on a second number the range `#L{a}-L{b}`, and a range in the address (a link someone shared)
 * is marked and scrolled to. The numbers are links without costing the page a byte a line: the
 * script keeps ONE link, `<a href="#L{n}" aria-label="Line n">`, laid over the number of one
 * row (the row under the mouse, so a number can be copied or opened as a link; else the row
 * last marked or focused, the first at start). It is one tab stop; the arrow keys (Home, End)
 * move it, and focus with it, from row to row; Enter follows it (`#L{n}`), Shift+Enter marks the
 * range from the line marked before. A conversation shows its comments a page at a time: an address
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
  /** The one line-number link, over the number of the row it is in (none before a file view's start). */
  var link = null, rows = null;
  function placeLink(row, focus) {
    if (!link || !row || row.parentNode !== rows) return;
    if (link.parentNode !== row) {
      link.href = '#' + row.id;
      link.setAttribute('aria-label', 'Line ' + row.id.slice(1));
      row.insertBefore(link, row.firstChild);
    }
    if (focus) link.focus();
  }
  function lineRow(node) {
    var li = node && node.closest ? node.closest('li') : null;
    return li && li.parentNode === rows ? li : null;
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
    if (link && document.activeElement !== link) placeLink(first, false);
    if (first && r[1] > r[0] && first.scrollIntoView) first.scrollIntoView({ block: 'center' });
  }
  /** The line whose number was clicked: the link over it, or a click on an item of ol.lines left of its text. */
  function numberClicked(e) {
    var t = e.target;
    // With Ctrl or Cmd the link opens where the browser opens links.
    if (t === link) return e.ctrlKey || e.metaKey ? 0 : Number(link.parentNode.id.slice(1)) || 0;
    if (!t || t.tagName !== 'LI' || !lineRow(t)) return 0;
    if (e.offsetX >= parseFloat(getComputedStyle(t).paddingLeft)) return 0;
    return Number(t.id.slice(1)) || 0;
  }
  /** Marks line n (the browser marks it: :target), or with extend the range from the line marked before. */
  function choose(n, extend) {
    if (extend && anchor) {
      var lo = Math.min(anchor, n), hi = Math.max(anchor, n);
      history.replaceState(null, '', '#L' + lo + (hi > lo ? '-L' + hi : ''));
      var keep = anchor;
      mark();
      anchor = keep;
    } else {
      anchor = n;
      // The range's class follows on hashchange.
      location.hash = '#L' + n;
    }
  }
  document.addEventListener('click', function (e) {
    var n = numberClicked(e);
    if (!n) return;
    e.preventDefault();
    var focused = e.target === link && document.activeElement === link;
    choose(n, e.shiftKey);
    // Going to the line's fragment moves focus to the page: a keyboard user stays on the number.
    if (focused) link.focus();
  });
  document.addEventListener('mouseover', function (e) {
    if (!link || document.activeElement === link) return;
    var row = lineRow(e.target);
    if (row) placeLink(row, false);
  });
  document.addEventListener('keydown', function (e) {
    if (!link || e.target !== link || e.altKey || e.ctrlKey || e.metaKey) return;
    var row = link.parentNode, to = null;
    if (e.key === 'ArrowDown') to = row.nextElementSibling;
    else if (e.key === 'ArrowUp') to = row.previousElementSibling;
    else if (e.key === 'Home') to = row.parentNode.firstElementChild;
    else if (e.key === 'End') to = row.parentNode.lastElementChild;
    else if (e.key === 'Enter' && e.shiftKey) {
      // (Shift+Enter on a link would open a window: here it extends the mark, as a shift-click.)
      e.preventDefault();
      choose(Number(row.id.slice(1)), true);
      return;
    } else return;
    e.preventDefault();
    placeLink(to, true);
  });
  /** Makes the link in a file view (its first list of lines), at the marked row or the first. */
  function startLink() {
    var list = document.querySelector('ol.lines');
    if (!list || !list.firstElementChild) return;
    rows = list;
    link = document.createElement('a');
    link.className = 'ln';
    placeLink(rows.firstElementChild, false);
  }
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
    startLink();
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
