// Two sessions side by side, as the collector compares them
// (GET /v1/sessions/{a}/compare/{b}): the baseline both continue and where
// each left it, outcome, shape, turns, agents, failures, denials, tokens,
// and the calls per tool, subtype and file. The collector computes all of
// it; this view only lays it out.
import { html, useState, useEffect } from '../lib/html.js';
import { getJSON, sessionPath, withQuery, HTTPError, NO_ANSWER } from '../lib/api.js';
import { holdLive, liveReady, subscribeModel, onLiveState } from '../lib/live.js';
import { ms, fmtDate, fmtNum, shortID, truncate, shapeLabel } from '../lib/format.js';
import { statusLabel, editable } from './sessions.js';

/** comparePath is the dashboard route comparing sessions a and b. */
export function comparePath(a, b, unrelated = false) {
  return `#/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}${unrelated ? '?unrelated=1' : ''}`;
}

// opened is the route of the comparison a page of the dashboard opened
// last (a session's link to its baseline): the way back from it is back in
// the history, to that page as it was left.
let opened = '';

/** openedFrom notes that a page of the dashboard opens the comparison at path (comparePath). */
export function openedFrom(path) {
  opened = path;
}

/**
 * leave goes back from the comparison: to the page that opened it, else
 * (a link from elsewhere, a reload) to the session list.
 */
function leave() {
  if (opened && opened === location.hash) {
    opened = '';
    history.back();
  } else {
    location.hash = '#/';
  }
}

const sessionLink = (id) => html`<a class="mono" href=${'#/s/' + encodeURIComponent(id)} title=${id}>${shortID(id, 12)}</a>`;

/** branch says how one side descends from the baseline. */
function branch(c, side) {
  const base = c.baseline;
  if (!base) return html`<span class="muted">none shared</span>`;
  const br = side === 'a' ? base.a : base.b;
  if (!br || !Array.isArray(br.via) || !br.via.length) return 'is the baseline';
  return html`${br.lineage || 'continues'} of ${sessionLink(base.session_id)}${br.forked_at ? ' at ' + fmtDate(ms(br.forked_at)) : ''}${br.via.length > 1 ? ` (${br.via.length} steps)` : ''}`;
}

const num = (v) => (typeof v === 'number' ? fmtNum(v) : '–');
const usage = (s, k) => (s.usage && typeof s.usage[k] === 'number' ? fmtNum(s.usage[k]) : '–');
const cost = (s) => (s.usage && typeof s.usage.cost_usd === 'number' ? '$' + s.usage.cost_usd.toFixed(4) + (s.usage.unpriced ? '+' : '') : '–');
const fileUse = (u) => (u && u.read && u.written ? 'read, written' : u && u.read ? 'read' : u && u.written ? 'written' : '–');
const outcome = (s) => statusLabel(s.status || '') + (s.end_reason ? ` (${s.end_reason})` : '');

function Row({ name, a, b, testid, cls = '' }) {
  return html`<tr data-testid=${testid}><th scope="row">${name}</th><td class=${cls} data-side="a">${a}</td><td class=${cls} data-side="b">${b}</td></tr>`;
}

function Counts({ title, rows, testid }) {
  if (!Array.isArray(rows) || !rows.length) return null;
  return html`<tbody data-testid=${testid}>
    <tr class="csec"><th colspan="3">${title}</th></tr>
    ${rows.map((r) => html`<${Row} key=${r.name} name=${r.name} a=${num(r.a)} b=${num(r.b)} cls="num" />`)}
  </tbody>`;
}

/**
 * CompareError says why two sessions were not compared, as a person would,
 * with what can be done about it.
 */
function CompareError({ a, b, st }) {
  let body;
  if (st.status === 409) {
    body = html`<p data-testid="compare-error">Sessions ${sessionLink(a)} and ${sessionLink(b)} share no baseline: neither was forked from the other, and they do not both continue one session.</p>
      <p>Their figures can still be set side by side, as two unrelated sessions. <a class="button" href=${comparePath(a, b, true)}>Compare them anyway</a></p>`;
  } else if (st.error === 'same' || (st.status === 400 && /same session/.test(st.error))) {
    body = html`<p data-testid="compare-error">Both sides are the same session, ${sessionLink(a)}${a !== b ? html` (${sessionLink(b)} is another id of it)` : ''}: there is nothing to compare.</p>
      <p>Open a session and follow its lineage (a fork offers “compare with the baseline”) to compare two.</p>`;
  } else if (st.status === 404) {
    body = html`<p data-testid="compare-error">One of the two sessions is not known to the collector: ${st.error}.</p>`;
  } else {
    body = html`<p class="error" data-testid="compare-error">Cannot compare these sessions: ${st.error}${st.status === 0 && st.error === NO_ANSWER ? '. They are compared as soon as it answers.' : ''}</p>`;
  }
  return html`<div class="compare compare-msg" data-testid="compare">${body}<p><a href="#/">Back to the sessions</a></p></div>`;
}

/** CompareView shows the comparison of sessions a and b. */
export function CompareView({ a, b, params }) {
  const unrelated = params.get('unrelated') === '1';
  const [st, setSt] = useState({ c: null, error: '', status: 0 });
  useEffect(() => {
    const ctl = new AbortController();
    setSt({ c: null, error: '', status: 0 });
    if (a === b) {
      setSt({ c: null, error: 'same', status: 400 });
      return () => {};
    }
    // unanswered: the last read got no answer from the collector; it is
    // read again once the stream is live again, which is when the
    // collector answers.
    let timer = 0, at = 0, unanswered = false;
    const read = () => {
      at = Date.now();
      unanswered = false;
      getJSON(withQuery(sessionPath(a, 'compare/' + encodeURIComponent(b)), { unrelated: unrelated ? 1 : '' }), { signal: ctl.signal })
        .then((c) => setSt({ c, error: '', status: 200 }))
        .catch((e) => {
          if (ctl.signal.aborted) return;
          const status = e instanceof HTTPError ? e.status : 0;
          unanswered = status === 0;
          setSt({ c: null, error: String(e.detail || e.message || e), status });
        });
    };
    const offLive = onLiveState((s) => { if (s === 'live' && unanswered && !ctl.signal.aborted) read(); });
    // The comparison follows the sessions as they change (read again at
    // most every 2 s), from the stream the session list shares, held
    // while the comparison shows.
    const off = subscribeModel((msg) => {
      if (!msg || (msg.session_id !== a && msg.session_id !== b) || timer) return;
      timer = setTimeout(() => { timer = 0; if (!ctl.signal.aborted) read(); }, Math.max(0, at + 2000 - Date.now()));
    });
    const release = holdLive();
    liveReady().then(() => { if (!ctl.signal.aborted) read(); });
    return () => { ctl.abort(); off(); offLive(); release(); clearTimeout(timer); };
  }, [a, b, unrelated]);
  // Escape (or Backspace) goes back, as from a session: a key a field
  // took, or one with a modifier, is left alone.
  useEffect(() => {
    const onKey = (e) => {
      if (e.key !== 'Escape' && e.key !== 'Backspace') return;
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || editable(e.target)) return;
      e.preventDefault();
      leave();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  const { c } = st;
  if (st.error) return html`<${CompareError} a=${a} b=${b} st=${st} />`;
  if (!c) return html`<div class="compare" data-testid="compare"><p class="muted">Loading…</p></div>`;
  const A = c.a || {}, B = c.b || {};
  return html`<div class="compare" data-testid="compare">
    <p class="cbase" data-testid="compare-baseline">${c.baseline
      ? html`Baseline ${sessionLink(c.baseline.session_id)}${c.baseline.title ? html` <span class="muted">${truncate(c.baseline.title, 100)}</span>` : ''}`
      : html`<span class="warn">These sessions share no baseline: neither was forked from the other or from a session both continue.</span>`}</p>
    <table class="stats ctable">
      <thead><tr><th></th><th>A</th><th>B</th></tr></thead>
      <tbody data-testid="compare-facts">
        <${Row} name="session" a=${sessionLink(A.session_id)} b=${sessionLink(B.session_id)} testid="compare-session" />
        <${Row} name="title" a=${truncate(A.title || '', 80)} b=${truncate(B.title || '', 80)} testid="compare-title" />
        <${Row} name="baseline" a=${branch(c, 'a')} b=${branch(c, 'b')} testid="compare-branch" />
        <${Row} name="outcome" a=${outcome(A)} b=${outcome(B)} testid="compare-outcome" />
        <${Row} name="shape" a=${shapeLabel(A.shape) || '–'} b=${shapeLabel(B.shape) || '–'} testid="compare-shape" />
        <${Row} name="turns" a=${num(A.counts?.prompts)} b=${num(B.counts?.prompts)} cls="num" />
        <${Row} name="agents" a=${num(A.counts?.agents)} b=${num(B.counts?.agents)} cls="num" />
        <${Row} name="tool calls" a=${num(A.counts?.tool_calls)} b=${num(B.counts?.tool_calls)} cls="num" testid="compare-calls" />
        <${Row} name="failures" a=${num(A.counts?.failures)} b=${num(B.counts?.failures)} cls="num" />
        <${Row} name="rejected" a=${num(A.counts?.rejected)} b=${num(B.counts?.rejected)} cls="num" testid="compare-rejected" />
        <${Row} name="denials" a=${num(A.counts?.denials)} b=${num(B.counts?.denials)} cls="num" />
        <${Row} name="input tokens" a=${usage(A, 'input_tokens')} b=${usage(B, 'input_tokens')} cls="num" />
        <${Row} name="output tokens" a=${usage(A, 'output_tokens')} b=${usage(B, 'output_tokens')} cls="num" />
        <${Row} name="cost" a=${cost(A)} b=${cost(B)} cls="num" />
      </tbody>
      <${Counts} title="tools" rows=${c.tools} testid="compare-tools" />
      <${Counts} title="subtypes" rows=${c.subtypes} testid="compare-subtypes" />
      <${Counts} title="subagent types" rows=${c.agent_types} testid="compare-agent-types" />
      ${Array.isArray(c.files) && c.files.length > 0 && html`<tbody data-testid="compare-files">
        <tr class="csec"><th colspan="3">files${c.files_omitted ? ` (${fmtNum(c.files_omitted)} more not listed)` : ''}</th></tr>
        ${c.files.map((f) => html`<${Row} key=${f.path} name=${html`<span class="mono">${f.path}</span>`} a=${fileUse(f.a)} b=${fileUse(f.b)} />`)}
      </tbody>`}
    </table>
  </div>`;
}
