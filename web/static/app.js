// hookwatch dashboard: the shell, the router, and the token prompt.
//
// Routes live in the URL fragment (#/, #/s/<session id>?tab=…,
// #/compare/<a>/<b>) so that the
// collector only ever serves "/" and cannot confuse a dashboard path with an
// API path.
import { html, render, useState, useEffect, useRef } from './lib/html.js';
import { onAuthRequired, setToken, getJSON, HTTPError } from './lib/api.js';
import { onLiveState, liveState } from './lib/live.js';
import { SessionList } from './views/sessions.js';
import { SessionView } from './views/session.js';
import { CompareView } from './views/compare.js';

/**
 * parseRoute reads the fragment: { name: 'list' | 'session' | 'compare' |
 * 'unknown', id, params }, and other for compare (#/compare/<a>/<b>). The
 * list is #/ (or no fragment); any other path is unknown, said so rather
 * than shown as the list, which would pass a mistyped link off as
 * followed.
 */
export function parseRoute(hash) {
  const h = (hash || '').replace(/^#/, '');
  const [path, query = ''] = h.split('?', 2);
  const params = new URLSearchParams(query);
  const c = /^\/compare\/([^/]+)\/([^/]+)$/.exec(path);
  if (c) {
    const dec = (v) => { try { return decodeURIComponent(v); } catch { return v; } };
    return { name: 'compare', id: dec(c[1]), other: dec(c[2]), params };
  }
  const m = /^\/s\/(.+)$/.exec(path);
  if (m) {
    let id = '';
    try { id = decodeURIComponent(m[1]); } catch { id = m[1]; }
    return { name: 'session', id, params };
  }
  if (path === '' || path === '/') return { name: 'list', id: '', params };
  return { name: 'unknown', id: '', params };
}

function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    // Back and Forward between entries the views pushed (pushState) fire
    // popstate, and not always hashchange: both are followed.
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    addEventListener('popstate', on);
    return () => {
      removeEventListener('hashchange', on);
      removeEventListener('popstate', on);
    };
  }, []);
  return route;
}

function LiveBadge({ needToken }) {
  const [st, setS] = useState(liveState());
  useEffect(() => {
    // The stream may have changed state between the render and now (the
    // list opens it before the first paint): read it as it is.
    setS(liveState());
    return onLiveState(setS);
  }, []);
  const s = needToken ? 'unauthorized' : st;
  const label = { idle: 'offline', connecting: 'connecting', live: 'live', retrying: 'reconnecting', paused: 'paused', unauthorized: 'token needed' }[s] || s;
  const title = s === 'unauthorized' ? 'The collector requires a token: nothing is shown or followed until one is given' : 'Event stream from the collector';
  return html`<span class=${'live live-' + s} data-state=${s} title=${title}>${label}</span>`;
}

// STREAM_DOWN_AFTER is how long the stream's attempts to connect go
// unanswered before the page says so: a brief blip (a dropped connection,
// a collector restarting) passes unsaid, the header's badge alone telling
// of it.
const STREAM_DOWN_AFTER = 2000;

/**
 * StreamDown says, above the page, that the collector does not answer
 * once the stream has tried to connect for STREAM_DOWN_AFTER without
 * being live again, and no more as soon as it is (or is let go of:
 * paused, idle, refused for want of a token, which the page says
 * otherwise). The wait starts at the first attempt, not when the
 * connection dropped: the collector asks for 2 s before it (retry:), in
 * which a restart fits, and the first attempt answers at once when the
 * collector is back. It blocks nothing: the page keeps what it loaded.
 *
 * What it says is of the collector, not of a page: moving to another page
 * neither hides it nor starts the wait again. Between two pages the
 * stream of the one that goes is closed before that of the one that comes
 * is opened (idle, then connecting): only an idle state that outlasts the
 * change of page lets go. It says it shows what was loaded only when the
 * stream of the page in view (page) was live: a page opened while the
 * collector was down loaded nothing, whatever the page before it had. The
 * region is always there, for a screen reader to announce what appears in
 * it.
 */
function StreamDown({ page }) {
  const [down, setDown] = useState(false);
  // The page in view, and whether its stream was live: read by the state
  // listener, which outlives any page. A page that comes has loaded
  // nothing yet, whatever the one before it had.
  const inView = useRef(page);
  const liveOn = useRef(false);
  if (inView.current !== page) {
    inView.current = page;
    liveOn.current = false;
  }
  useEffect(() => {
    let timer = 0;
    let shown = false;
    const clear = () => {
      clearTimeout(timer);
      timer = 0;
      shown = false;
      setDown(false);
    };
    const on = (s) => {
      if (s === 'connecting' || s === 'retrying') {
        // Connecting and retrying alternate while it is down: the first
        // attempt starts the wait, the rest leave it be.
        if (s === 'connecting' && !timer && !shown) timer = setTimeout(() => { timer = 0; shown = true; setDown(true); }, STREAM_DOWN_AFTER);
        return;
      }
      if (s === 'idle') {
        // The views open their streams in the same commit as the one
        // before closed its own (in layout effects and unmounts): idle
        // still, once that is done, no view follows the collector.
        queueMicrotask(() => { if (liveState() === 'idle') clear(); });
        return;
      }
      if (s === 'live') liveOn.current = true;
      clear();
    };
    on(liveState());
    const off = onLiveState(on);
    return () => { off(); clearTimeout(timer); };
  }, []);
  return html`
    <div class="stream-status" role="status" aria-live="polite">
      ${down && html`<p class="stream-down" data-testid="stream-down">The collector at ${location.origin} does not answer${liveOn.current ? '; showing what was loaded' : ''}. Retrying…</p>`}
    </div>`;
}

/**
 * TokenPrompt asks for the collector's token. It tries the token given
 * before the page uses it: a refused one is said so, and asked for again.
 */
function TokenPrompt({ refused, onDone }) {
  const [v, setV] = useState('');
  const [busy, setBusy] = useState(false);
  const input = useRef(null);
  useEffect(() => { input.current?.focus(); }, [refused]);
  const submit = async (e) => {
    e.preventDefault();
    const t = v.trim();
    if (!t || busy) return;
    setBusy(true);
    setToken(t);
    try {
      await getJSON('/v1/sessions?limit=1');
    } catch (err) {
      // A refused token comes back through onAuthRequired, refused; any
      // other failure (the collector is down) is for the pages to show.
      if (err instanceof HTTPError && err.status === 401) {
        setBusy(false);
        setV('');
        input.current?.focus();
        return;
      }
    }
    setBusy(false);
    onDone();
  };
  return html`
    <form class="token" data-testid="token-form" onSubmit=${submit}>
      <label>The collector requires a token (its HOOKWATCH_TOKEN, or one of <code>hookwatch token create</code>):
        <input ref=${input} type="password" autocomplete="off" value=${v} onInput=${(e) => setV(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled=${busy}>Use token</button>
      ${refused && html`<span class="token-error" role="alert" data-testid="token-refused">The collector refused that token: check it and try again.</span>`}
    </form>`;
}

function App() {
  const route = useRoute();
  // null, or { refused } once the collector asked for a token.
  const [needToken, setNeedToken] = useState(null);
  const [epoch, setEpoch] = useState(0);
  useEffect(() => onAuthRequired(({ refused }) => setNeedToken({ refused })), []);
  // The session view names its own page, by the session's title, which
  // only it knows.
  useEffect(() => {
    if (route.name === 'session') return;
    document.title = route.name === 'compare' ? `hookwatch · ${route.id.slice(0, 8)} vs ${route.other.slice(0, 8)}`
      : route.name === 'unknown' ? 'No such page · hookwatch' : 'hookwatch · sessions';
  }, [route.name, route.id, route.other]);
  return html`
    <header class="top">
      <a class="brand" href="#/"><span class="logo" aria-hidden="true"></span>hookwatch</a>
      <nav class="crumbs">
        <a href="#/" class=${route.name === 'list' ? 'on' : ''}>Sessions</a>
        ${route.name === 'session' && html`<span class="sep">/</span><span class="crumb-id" title=${route.id}>${route.id}</span>`}
        ${route.name === 'compare' && html`<span class="sep">/</span><span class="crumb-id">compare ${route.id.slice(0, 8)} · ${route.other.slice(0, 8)}</span>`}
      </nav>
      <span class="spacer"></span>
      <${LiveBadge} needToken=${Boolean(needToken)} />
    </header>
    ${!needToken && html`<${StreamDown} page=${route.name + '/' + route.id + '/' + (route.other || '')} />`}
    ${needToken && html`<${TokenPrompt} refused=${needToken.refused} onDone=${() => { setNeedToken(null); setEpoch(epoch + 1); }} />`}
    <main class="main" key=${epoch}>
      ${needToken
        ? html`<p class="boot" data-testid="needs-token">Enter the collector's token above to see its sessions.</p>`
        : route.name === 'session'
          ? html`<${SessionView} key=${route.id} id=${route.id} params=${route.params} />`
          : route.name === 'compare'
            ? html`<${CompareView} key=${route.id + '/' + route.other} a=${route.id} b=${route.other} params=${route.params} />`
            : route.name === 'unknown'
              ? html`<section class="notfound" data-testid="no-page"><h2>No such page</h2><p><span class="mono">${location.hash}</span> is not a page of the dashboard.</p>
                  <p><a href="#/">Go to the sessions</a></p></section>`
              : html`<${SessionList} params=${route.params} />`}
    </main>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
