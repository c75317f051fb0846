// hookwatch dashboard: the shell, the router, and the token prompt.
//
// Routes live in the URL fragment (#/, #/s/<session id>?tab=…,
// #/compare/<a>/<b>) so that the
// collector only ever serves "/" and cannot confuse a dashboard path with an
// API path.
import { html, render, useState, useEffect } from './lib/html.js';
import { onAuthRequired, setToken, getToken } from './lib/api.js';
import { onLiveState, liveState } from './lib/live.js';
import { SessionList } from './views/sessions.js';
import { SessionView } from './views/session.js';
import { CompareView } from './views/compare.js';

/**
 * parseRoute reads the fragment: { name: 'list' | 'session' | 'compare',
 * id, params }, and other for compare (#/compare/<a>/<b>).
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
  return { name: 'list', id: '', params };
}

function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function LiveBadge() {
  const [s, setS] = useState(liveState());
  useEffect(() => onLiveState(setS), []);
  const label = { idle: 'offline', connecting: 'connecting', live: 'live', retrying: 'reconnecting' }[s] || s;
  return html`<span class=${'live live-' + s} data-state=${s} title="Event stream from the collector">${label}</span>`;
}

function TokenPrompt({ onDone }) {
  const [v, setV] = useState(getToken());
  return html`
    <form class="token" onSubmit=${(e) => { e.preventDefault(); setToken(v.trim()); onDone(); }}>
      <label>The collector requires a token (its HOOKWATCH_TOKEN, or one of hookwatch token create):
        <input type="password" autocomplete="off" value=${v} onInput=${(e) => setV(e.currentTarget.value)} />
      </label>
      <button type="submit">Use token</button>
    </form>`;
}

function App() {
  const route = useRoute();
  const [needToken, setNeedToken] = useState(false);
  const [epoch, setEpoch] = useState(0);
  useEffect(() => onAuthRequired(() => setNeedToken(true)), []);
  useEffect(() => {
    document.title = route.name === 'session' ? `hookwatch · ${route.id.slice(0, 8)}`
      : route.name === 'compare' ? `hookwatch · ${route.id.slice(0, 8)} vs ${route.other.slice(0, 8)}` : 'hookwatch · sessions';
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
      <${LiveBadge} />
    </header>
    ${needToken && html`<${TokenPrompt} onDone=${() => { setNeedToken(false); setEpoch(epoch + 1); }} />`}
    <main class="main" key=${epoch}>
      ${route.name === 'session'
        ? html`<${SessionView} key=${route.id} id=${route.id} params=${route.params} />`
        : route.name === 'compare'
          ? html`<${CompareView} key=${route.id + '/' + route.other} a=${route.id} b=${route.other} params=${route.params} />`
          : html`<${SessionList} params=${route.params} />`}
    </main>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
