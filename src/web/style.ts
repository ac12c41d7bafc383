import { TOKEN_TAGS, type TokenColour } from '../lib/highlight'

/** The colours of highlighted code (lib/highlight.ts marks each with its element). */
const TOKEN_COLOURS: Record<TokenColour, string> = { comment: '#59636e', keyword: '#cf222e', string: '#0a3069', number: '#0550ae', title: '#6639ba', meta: '#953800' }

/** The web interface's one stylesheet (served by ./assets.ts under a hashed path). */
export const STYLESHEET = `
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #fff; --soft: #f6f8fa; --link: #0550ae; --accent: #1a7f37; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
* { box-sizing: border-box; }
body { margin: 0; line-height: 1.5; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline: 2px solid var(--link); outline-offset: 2px; }
.site-header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .6rem 1rem; background: #24292f; color: #fff; }
.site-header a { color: #fff; }
.site-header .brand { font-weight: 700; text-decoration: none; margin-right: auto; }
.site-header form { display: inline; margin: 0; }
.site-header .new-menu { position: relative; }
.site-header .new-menu summary { cursor: pointer; }
.site-header .new-menu ul { position: absolute; right: 0; z-index: 10; list-style: none; margin: .3rem 0 0; padding: .3rem 0; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; min-width: 12rem; }
.site-header .new-menu li a { display: block; padding: .3rem .75rem; color: var(--fg); text-decoration: none; }
.site-header .new-menu li a:hover, .site-header .new-menu li a:focus-visible { background: var(--soft); }
.site-header button { background: none; border: 1px solid #8c959f; color: #fff; border-radius: 4px; padding: .15rem .6rem; cursor: pointer; font: inherit; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
.site-footer { max-width: 72rem; margin: 2rem auto 1rem; padding: 1rem; border-top: 1px solid var(--line); color: var(--muted); font-size: .875rem; }
h1 { font-size: 1.5rem; margin: .5rem 0; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; }
.muted { color: var(--muted); }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
.box { border: 1px solid var(--line); border-radius: 6px; margin: 1rem 0; overflow: hidden; }
.box > header { background: var(--soft); padding: .5rem .75rem; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
ul.entries { list-style: none; margin: 0; padding: 0; }
ul.entries li { padding: .4rem .75rem; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
ul.entries li:first-child { border-top: 0; }
.kind { display: inline-block; width: 1.5rem; color: var(--muted); }
.topics { display: flex; flex-wrap: wrap; gap: .35rem; list-style: none; padding: 0; margin: .5rem 0; }
.topics li { background: #ddf4ff; color: #0550ae; border-radius: 1rem; padding: 0 .6rem; font-size: .85rem; }
.counts { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; padding: 0; margin: .5rem 0; }
.clone input { width: 100%; font-family: ui-monospace, monospace; padding: .3rem; border: 1px solid var(--line); border-radius: 4px; }
.clone label { display: block; font-size: .85rem; color: var(--muted); margin-top: .4rem; }
.breadcrumb { overflow-wrap: anywhere; }
.markdown { padding: 1rem; overflow-wrap: anywhere; }
.markdown pre, .code { overflow-x: auto; }
.markdown img { max-width: 100%; }
.markdown table { border-collapse: collapse; display: block; overflow-x: auto; margin: .75rem 0; }
.markdown th, .markdown td { border: 1px solid var(--line); padding: .3rem .6rem; }
.markdown th { background: var(--soft); }
table.code { border-collapse: collapse; width: 100%; font-family: ui-monospace, SFMono-Regular, monospace; font-size: .85rem; }
table.code td { padding: 0 .75rem; vertical-align: top; white-space: pre; }
table.diff tr:not(.notes, .hunk) > td:nth-child(-n+2) { text-align: right; user-select: none; width: 1%; color: var(--muted); }
table.diff td a { color: var(--link); }
.notice { padding: 1rem; }
form.stack { display: grid; gap: .75rem; max-width: 24rem; }
form.stack label { display: grid; gap: .25rem; font-weight: 600; }
form.stack label :is(input, textarea, select), .filters label :is(input, textarea, select) { font-weight: 400; }
form.stack input { font: inherit; padding: .4rem; border: 1px solid #8c959f; border-radius: 4px; }
button.primary { font: inherit; background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: .45rem 1rem; cursor: pointer; }
.error { background: #ffebe9; border: 1px solid #ff818266; border-radius: 6px; padding: .5rem .75rem; }
.notice-ok { background: #dafbe1; border: 1px solid #4ac26b66; border-radius: 6px; padding: .5rem .75rem; }
form.stack textarea, form.stack select { font: inherit; padding: .4rem; border: 1px solid #8c959f; border-radius: 4px; }
form.stack fieldset { border: 1px solid var(--line); border-radius: 6px; display: grid; gap: .35rem; }
form.stack label.check { display: flex; gap: .5rem; align-items: center; font-weight: 400; }
form.wide { max-width: 40rem; }
form.inline { display: inline; margin: 0; }
form.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0; }
form.row label { display: grid; gap: .25rem; }
form.row input, form.row select { font: inherit; padding: .35rem; border: 1px solid #8c959f; border-radius: 4px; }
button.secondary, button.danger { font: inherit; background: var(--soft); color: var(--fg); border: 1px solid #8c959f; border-radius: 4px; padding: .3rem .8rem; cursor: pointer; }
button.danger { color: #a40e26; border-color: #a40e26; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 1rem 0; }
.settings { display: grid; grid-template-columns: 12rem 1fr; gap: 1.5rem; }
.settings-menu ul { list-style: none; margin: 0; padding: 0; border: 1px solid var(--line); border-radius: 6px; }
.settings-menu li a { display: block; padding: .4rem .75rem; border-top: 1px solid var(--line); text-decoration: none; }
.settings-menu li:first-child a { border-top: 0; }
.settings-menu a[aria-current="page"] { font-weight: 700; background: var(--soft); }
.settings-body { min-width: 0; }
table.list { border-collapse: collapse; width: 100%; }
table.list th, table.list td { text-align: left; padding: .4rem .6rem; border-top: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
.token-once { font-family: ui-monospace, monospace; background: var(--soft); padding: .5rem; border: 1px solid var(--line); border-radius: 4px; overflow-wrap: anywhere; }
.repo-actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; }
.danger-zone { border: 1px solid #a40e26; border-radius: 6px; padding: 0 1rem 1rem; margin: 1rem 0; }
.branches select { font: inherit; }
ol.lines { margin: 0; padding: .25rem 0; list-style: none; counter-reset: line; font-family: ui-monospace, SFMono-Regular, monospace; font-size: .85rem; --w: 3ch; }
ol.lines > li { counter-increment: line; position: relative; white-space: pre; min-height: 1.5em; padding: 0 .75rem 0 calc(var(--w) + 2.25rem); }
ol.lines > li::before { content: counter(line); position: absolute; left: 0; box-sizing: border-box; width: calc(var(--w) + 1.5rem); padding: 0 .75rem; text-align: right; color: var(--muted); user-select: none; cursor: pointer; }
ol.lines > li:target, ol.lines > li.selected { background: #fff8c5; }
ol.lines > li > a.ln { position: absolute; left: 0; top: 0; bottom: 0; width: calc(var(--w) + 1.5rem); }
ol.lines > li > a.ln:focus-visible { outline-offset: -2px; }
${[4, 5, 6, 7, 8].map((digits) => `ol.lines.w${digits} { --w: ${digits}ch; }`).join('\n')}
ol.lines :is(${Object.values(TOKEN_TAGS).join(', ')}) { font: inherit; text-decoration: none; quotes: none; }
${Object.entries(TOKEN_TAGS).map(([colour, tag]) => `ol.lines ${tag} { color: ${TOKEN_COLOURS[colour as TokenColour]}; }`).join('\n')}
@media (max-width: 40rem) { main { padding: .5rem; } .site-header { padding: .5rem; } .settings { grid-template-columns: 1fr; } }
.tabs, .state-tabs { display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: .75rem 0; border-bottom: 1px solid var(--line); padding-bottom: .4rem; }
.tabs a[aria-current], .state-tabs a[aria-current] { font-weight: 700; color: var(--fg); }
.list-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; }
.board { display: flex; gap: .75rem; overflow-x: auto; align-items: flex-start; padding-bottom: .5rem; }
.board-column { flex: 0 0 17rem; margin: 0; }
.board-column h3 { margin: 0; font-size: 1rem; }
.board .card-move { display: flex; gap: .35rem; align-items: center; margin-top: .3rem; }
.board .column-actions { padding: .4rem .75rem; border-top: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .35rem; }
.board .column-actions button, .board .card-move button, .board .card-move select { font-size: .85rem; padding: .15rem .4rem; }
.list-head .actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.project-description { white-space: pre-line; margin: .3rem 0; }
a.button { display: inline-block; text-decoration: none; }
a.button.primary { background: var(--accent); color: #fff; border-radius: 4px; padding: .35rem .9rem; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .5rem 0; }
.filters label { display: grid; gap: .15rem; font-size: .85rem; font-weight: 600; }
.filters input, .filters select, .filters button, form.stack select, form.stack textarea, .comment-form button, .thread button, main form button { font: inherit; padding: .3rem .5rem; border: 1px solid #8c959f; border-radius: 4px; background: var(--bg); color: var(--fg); }
form.stack.wide { max-width: none; }
form.stack textarea { width: 100%; font-family: inherit; }
form.stack fieldset { border: 1px solid var(--line); border-radius: 6px; display: flex; flex-wrap: wrap; gap: .5rem 1rem; }
form.stack label.check, label.check { display: inline-flex; gap: .35rem; align-items: center; font-weight: 400; }
.buttons { display: flex; flex-wrap: wrap; gap: .5rem; }
main form button.primary { background: var(--accent); color: #fff; border: 0; }
.issue-row .title { font-weight: 600; }
.meta { font-size: .85rem; }
.label { display: inline-flex; align-items: center; gap: .3rem; border: 1px solid var(--line); border-radius: 1rem; padding: 0 .5rem; font-size: .8rem; color: var(--fg); text-decoration: none; margin-right: .25rem; }
.state { display: inline-block; border-radius: 1rem; padding: 0 .6rem; font-size: .8rem; font-weight: 600; color: #fff; background: #1a7f37; }
.state-closed { background: #cf222e; }
.state-merged { background: #8250df; }
.activity-items { list-style: none; padding: 0; margin: .5rem 0; }
.activity-items li { padding: .35rem 0; border-bottom: 1px solid var(--line); }
.additions { color: #1a7f37; } .deletions { color: #cf222e; }
.chart-box { margin: 1rem 0; }
svg.chart { display: block; width: 100%; height: 8rem; }
svg.chart.small { height: 3rem; }
svg.chart path { fill: #0969da; }
svg.chart.additions path { fill: #1a7f37; } svg.chart.deletions path { fill: #cf222e; }
svg.chart.split { height: 12rem; } svg.chart.split path.up { fill: #1a7f37; } svg.chart.split path.down { fill: #cf222e; } svg.chart.split path.axis { stroke: #d1d9e0; stroke-width: 1; fill: none; vector-effect: non-scaling-stroke; }
.chart-axis { display: flex; justify-content: space-between; font-size: .8rem; margin: .25rem 0; }
ol.contributors { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(20rem, 1fr)); gap: 0 1rem; }
ol.contributors svg.chart { margin: .25rem 0; }
.pager { display: flex; flex-wrap: wrap; gap: .5rem; margin: .75rem 0; }
.pager [aria-current] { font-weight: 700; }
.conversation { display: grid; grid-template-columns: minmax(0, 1fr) 14rem; gap: 1.5rem; }
.side-title { font-size: .9rem; margin: .75rem 0 .25rem; }
.overdue { color: #a40e26; }
ul.chips { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .35rem; }
.comment { border: 1px solid var(--line); border-radius: 6px; margin: 1rem 0; overflow: hidden; }
.comment > header { background: var(--soft); padding: .4rem .75rem; border-bottom: 1px solid var(--line); font-size: .9rem; }
.review-approved > header { background: #dafbe1; }
.review-request-changes > header { background: #ffebe9; }
.tag { color: var(--muted); font-style: italic; }
.line-comment { border-top: 1px solid var(--line); padding: .5rem .75rem; }
.line-comment .markdown { padding: .25rem 0; }
pre.hunk { background: var(--soft); padding: .5rem; font-size: .8rem; overflow-x: auto; margin: .25rem 0; }
pre.plain { white-space: pre-wrap; font-family: inherit; }
.event { margin: .5rem 0 .5rem 1rem; padding-left: .75rem; border-left: 2px solid var(--line); font-size: .9rem; overflow-wrap: anywhere; }
.blocked { margin: .5rem 0; }
.thread form { display: inline; }
@media (max-width: 50rem) { .conversation { grid-template-columns: minmax(0, 1fr); } }
.code-nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0; margin: .5rem 0; border-bottom: 1px solid var(--line); }
.code-nav a { display: inline-block; padding: .35rem 0; text-decoration: none; }
.code-nav a[aria-current] { font-weight: 700; border-bottom: 2px solid #bc4c00; }
ol.commits { list-style: none; padding: 0; }
.check-mark { font-weight: 700; text-decoration: none; display: inline-block; min-width: 1em; text-align: center; }
.check-success .check-mark, a.check-success { color: #1a7f37; }
.signature-verified { border-color: #1a7f37; color: #1a7f37; }
.signature-unverified { color: var(--muted); }
.check-pending .check-mark, a.check-pending, .check-warning .check-mark, a.check-warning { color: #9a6700; }
.check-failure .check-mark, a.check-failure, .check-error .check-mark, a.check-error { color: #cf222e; }
.checks { border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0; }
.checks-summary { margin: 0; padding: .4rem .75rem; background: var(--soft); border-bottom: 1px solid var(--line); font-weight: 600; }
ul.checks-list { list-style: none; margin: 0; padding: 0; }
ul.checks-list li { padding: .35rem .75rem; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
ul.checks-list li:first-child { border-top: 0; }
.check-details { margin-left: .5rem; }
ol.commits li, ul.box.entries li { overflow-wrap: anywhere; }
.commit .commit-subject { margin: 0; font-size: 1.1rem; overflow-wrap: anywhere; }
.commit-message { padding: 0 .75rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.commit-facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem .75rem; padding: .5rem .75rem; margin: 0; }
.commit-facts dt { color: var(--muted); }
.commit-facts dd { margin: 0; overflow-wrap: anywhere; }
.diff-summary .added, .diff-counts .added { color: var(--accent); }
.diff-summary .removed, .diff-counts .removed { color: #b3261e; }
.diff-files summary { padding: .5rem .75rem; background: var(--soft); cursor: pointer; }
.box > header .path { overflow-wrap: anywhere; }
table.diff tr.add { background: #e6ffec; }
table.diff tr.del { background: #ffebe9; }
pre.diff span { display: block; min-height: 1.2em; }
pre.diff span.add { background: #e6ffec; }
pre.diff span.del { background: #ffebe9; }
table.diff tr.hunk td { background: #ddf4ff; color: var(--muted); }
table.diff tr.note td { color: var(--muted); font-style: italic; }
table.diff tr.notes > td { white-space: normal; padding: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: .9rem; background: var(--bg); border-top: 1px solid var(--line); border-bottom: 1px solid var(--line); }
table.diff tr.notes form { padding: .5rem .75rem; }
.line-comments .line-comment:first-child { border-top: 0; }
form.stack textarea { font: inherit; padding: .4rem; border: 1px solid #8c959f; border-radius: 4px; width: 100%; }
.release .assets { padding: 0 .75rem .75rem; }
form.stack textarea.code-editor { font-family: ui-monospace, SFMono-Regular, monospace; font-size: .85rem; white-space: pre; overflow-wrap: normal; overflow-x: auto; tab-size: 4; }
.release .assets h4 { margin: .5rem 0; }
@media (max-width: 40rem) { main { padding: .5rem; } .site-header { padding: .5rem; } }
/* The branches and tags pages' forms (web/pages/ref-forms.tsx). */
.ref-forms { display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin-top: .25rem; }
.ref-form > summary { cursor: pointer; color: var(--link); }
.ref-form[open] { flex-basis: 100%; }
.ref-form form { padding: .5rem 0; max-width: 32rem; }
/* Conversation edit forms (pages/issue-edit.tsx): folded in <details>. */
details.edit-box { margin: .5rem 0; }
details.edit-box > summary { cursor: pointer; color: var(--link); display: inline-block; }
details.edit-box[open] > summary { margin-bottom: .5rem; }
.comment-actions { display: flex; flex-wrap: wrap; gap: 0 1rem; padding: 0 .75rem; }
.comment-actions details[open] { flex-basis: 100%; }
ul.side-choices { list-style: none; padding: 0; margin: 0; display: grid; gap: .25rem; }
/* The blame page (pages/blame.tsx). */
table.blame { width: 100%; border-collapse: collapse; font-size: .85rem; }
table.blame tr.run { border-top: 1px solid var(--border, #d0d7de); }
table.blame td { vertical-align: top; padding: 0 .5rem; }
td.blame-commit { width: 16rem; max-width: 16rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: .8rem; }
td.blame-commit a { font-family: ui-monospace, SFMono-Regular, monospace; }
td.blame-num { text-align: right; user-select: none; width: 1%; }
td.blame-num a { color: var(--muted); }
td.blame-code { white-space: pre; font-family: ui-monospace, SFMono-Regular, monospace; }
table.blame tr:target { background: #fff8c5; }
/* The code search (pages/code-search.tsx): the lines of a file that match, a gap where they skip. */
.code-result table.blame tr.gap td { color: var(--muted); padding: .1rem .5rem; }
.code-result mark { background: #fff8c5; color: inherit; }
form.code-search { margin: .5rem 0; }
/* Reactions under a description or a comment (pages/reactions.tsx). */
.reactions { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem .5rem; padding: .25rem .75rem; }
.reactions .reaction { padding: .1rem .5rem; border-radius: 1rem; }
.reactions button.reaction[aria-pressed="true"] { background: #ddf4ff; border-color: #54aeff; }
.reactions details.add-reaction { margin: 0; }
/* The history's tools (pages/commits.tsx) and the commit graph (pages/graph.tsx): the lanes' drawing beside the list, its rows as high as the drawing's (28px). */
.history-tools { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; margin: .5rem 0; }
.history-tools form { margin: 0; }
h2 a.small { font-size: .85rem; font-weight: normal; margin-left: .75rem; }
.graph-form { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; margin: .5rem 0; }
.graph-form details { flex-basis: 100%; }
.graph-form details > summary { cursor: pointer; color: var(--link); }
.graph-form fieldset { border: 0; padding: .25rem 0; margin: 0; }
.graph-form ul.side-choices { grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); }
.graph-scroll { display: flex; overflow-x: auto; padding: 0 .5rem; }
svg.graph-lanes { flex: none; }
svg.graph-lanes path { fill: none; stroke-width: 2; stroke-linecap: round; }
svg.graph-lanes circle { stroke: var(--bg); stroke-width: 1.5; }
ol.graph-rows { list-style: none; margin: 0; padding: 0 0 0 .5rem; flex: 1; min-width: 0; }
ol.graph-rows li { display: flex; align-items: center; gap: .5rem; height: 28px; white-space: nowrap; font-size: .875rem; }
ol.graph-rows li:target { background: #fff8c5; }
ol.graph-rows .subject { overflow: hidden; text-overflow: ellipsis; flex: 1 1 auto; min-width: 4rem; }
ol.graph-rows .by, ol.graph-rows .refs, ol.graph-rows .sha { flex: none; }
ol.graph-rows .refs { display: flex; gap: .25rem; }
.ref { font-size: .75rem; line-height: 1.4; padding: 0 .45rem; border: 1px solid var(--line); border-radius: 1rem; text-decoration: none; }
.ref-branch { background: #ddf4ff; }
.ref-tag { background: #fff8c5; }
.ref-pull { background: #fbefff; }
svg.graph-lanes .lane-0 { stroke: #1a7f37; } svg.graph-lanes circle.lane-0 { fill: #1a7f37; }
svg.graph-lanes .lane-1 { stroke: #0969da; } svg.graph-lanes circle.lane-1 { fill: #0969da; }
svg.graph-lanes .lane-2 { stroke: #bc4c00; } svg.graph-lanes circle.lane-2 { fill: #bc4c00; }
svg.graph-lanes .lane-3 { stroke: #8250df; } svg.graph-lanes circle.lane-3 { fill: #8250df; }
svg.graph-lanes .lane-4 { stroke: #cf222e; } svg.graph-lanes circle.lane-4 { fill: #cf222e; }
svg.graph-lanes .lane-5 { stroke: #1b7c83; } svg.graph-lanes circle.lane-5 { fill: #1b7c83; }
svg.graph-lanes .lane-6 { stroke: #9a6700; } svg.graph-lanes circle.lane-6 { fill: #9a6700; }
svg.graph-lanes .lane-7 { stroke: #bf3989; } svg.graph-lanes circle.lane-7 { fill: #bf3989; }
svg.graph-lanes .lane-8 { stroke: #57606a; } svg.graph-lanes circle.lane-8 { fill: #57606a; }
svg.graph-lanes .lane-9 { stroke: #2da44e; } svg.graph-lanes circle.lane-9 { fill: #2da44e; }
svg.graph-lanes .lane-10 { stroke: #6639ba; } svg.graph-lanes circle.lane-10 { fill: #6639ba; }
svg.graph-lanes .lane-11 { stroke: #953800; } svg.graph-lanes circle.lane-11 { fill: #953800; }
.graph.monochrome svg.graph-lanes path { stroke: var(--muted); }
.graph.monochrome svg.graph-lanes circle { fill: var(--fg); }
@media (max-width: 40rem) { ol.graph-rows .by { display: none; } }
`
