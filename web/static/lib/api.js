// Client of the collector's /v1 API and its event stream.

const TOKEN_KEY = 'hookwatch.token';

/**
 * HTTPError carries the status of a failed API call, and in detail the
 * collector's own words (its JSON error) without the path and status.
 * Status 0 is a call the collector did not answer at all (it is stopped,
 * or the network is down), detail NO_ANSWER: the browser's own words for
 * it ("Failed to fetch") tell a reader nothing.
 */
export class HTTPError extends Error {
  constructor(status, message, detail = '') {
    super(message);
    this.status = status;
    this.detail = detail || message;
  }
}

export function getToken() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

// Listeners told when the token changes: a stream the collector refused
// waits for one.
const tokenListeners = new Set();

export function setToken(t) {
  try { t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY); } catch { /* private mode */ }
  tokenListeners.forEach((fn) => fn());
}

function headers(extra) {
  const h = { Accept: 'application/json', ...extra };
  const t = getToken();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

// Listeners told when the API answers 401, so the shell can ask for a
// token: fn({ refused }), refused when a token was sent (a wrong one).
const authListeners = new Set();
export function onAuthRequired(fn) { authListeners.add(fn); return () => authListeners.delete(fn); }
const authRequired = (sent) => authListeners.forEach((fn) => fn({ refused: Boolean(sent.Authorization) }));

/** NO_ANSWER is the detail of an HTTPError of status 0. */
export const NO_ANSWER = 'the collector does not answer';

/**
 * getJSON fetches an API path and decodes its JSON body. It throws an
 * HTTPError for a status other than 2xx, and one of status 0 when the
 * collector does not answer; an abort is thrown as fetch throws it.
 */
export async function getJSON(path, { signal } = {}) {
  const h = headers();
  let res;
  try {
    res = await fetch(path, { headers: h, signal, credentials: 'same-origin' });
  } catch (e) {
    if (signal?.aborted || e?.name === 'AbortError') throw e;
    throw new HTTPError(0, `${path}: ${NO_ANSWER}`, NO_ANSWER);
  }
  if (!res.ok) {
    if (res.status === 401) authRequired(h);
    let msg = res.statusText;
    try { const body = await res.json(); if (body && typeof body.error === 'string') msg = body.error; } catch { /* not JSON */ }
    throw new HTTPError(res.status, `${path}: ${res.status} ${msg}`, msg);
  }
  return res.json();
}

/**
 * withQuery appends the non-empty params to path. agent_id is kept even
 * when empty: agent_id= selects the main agent, its absence every agent.
 */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && (v !== '' || k === 'agent_id')) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

/**
 * bodies yields every page of a cursor-paged listing, as the decoded bodies;
 * key is the array field of the body ("sessions", "events", …). It asks for
 * the next page as soon as it has read a page, so the server works while
 * the caller processes. It stops at an empty next cursor, and also when a
 * server repeats a cursor, so a paging bug cannot loop.
 */
export async function* bodies(path, key, params = {}, { signal } = {}) {
  const seen = new Set();
  const get = (cursor) => getJSON(withQuery(path, { ...params, cursor }), { signal });
  let pending = get('');
  while (pending) {
    const body = await pending;
    const items = Array.isArray(body?.[key]) ? body[key] : [];
    const next = typeof body?.next === 'string' ? body.next : (typeof body?.next_cursor === 'string' ? body.next_cursor : '');
    pending = null;
    if (next && !seen.has(next) && items.length) {
      seen.add(next);
      pending = get(next);
      pending.catch(() => {}); // reported when awaited
    }
    yield { items, body };
  }
}

/** pages yields the items of every page of a listing, as bodies reads them. */
export async function* pages(path, key, params = {}, opts = {}) {
  for await (const { items } of bodies(path, key, params, opts)) yield items;
}

/** sessionPath returns the API path of a session's sub-resource. */
export function sessionPath(id, sub = '') {
  return `/v1/sessions/${encodeURIComponent(id)}${sub ? '/' + sub : ''}`;
}

/**
 * stream follows an event stream (path, by default /v1/stream; from
 * lastEventId on, or from what is stored when it connects) and calls
 * onEvent with each decoded event, onModel with each model message
 * (event: model) and onSignals with each notice of a stalled session
 * (event: signals: {session_id, signals}). It is an EventSource written over fetch, because an
 * EventSource cannot send the Authorization header. It reconnects with
 * backoff, resuming from the last id it saw, sent back as it came ("<seq>",
 * or "<event seq>:<model seq>" from a collector with model messages; the
 * collector sends one as the stream opens, so a stream that received
 * nothing still resumes where it started).
 * onState receives 'connecting' | 'live' | 'retrying' | 'unauthorized',
 * and { resumed }: live once the collector answered, which is when its
 * starting point is fixed; resumed when that point is where an earlier
 * connection left off, rather than what is stored now (the first
 * connection, or one that had no id to send). Refused for want of a token
 * (401), it does not retry: it connects again when the token changes.
 * While the page is hidden (another tab, a minimised window) for longer
 * than PAUSE_HIDDEN it lets go of its connection ('paused'), and when the
 * page shows again it connects from where it left off: a browser keeps
 * six connections to a collector over HTTP/1.1, and the tabs left open
 * in the background would otherwise hold them all, the next tab's
 * requests waiting behind them. It returns close(), which ends the stream
 * and returns the id to resume from ("" when it had none), for a stream
 * opened again later (lastEventId) to go on where this one stopped.
 */
export function stream({ path = '/v1/stream', lastEventId, onEvent = () => {}, onModel = () => {}, onSignals = () => {}, onState = () => {} }) {
  let last = lastEventId != null ? String(lastEventId) : '';
  let closed = false;
  let ctrl = null;
  let delay = 250;
  let timer = 0;
  let refused = false;
  let paused = false;
  let pauseTimer = 0;
  const onVisibility = () => {
    clearTimeout(pauseTimer);
    if (closed) return;
    if (document.hidden) {
      pauseTimer = setTimeout(() => {
        if (closed || !document.hidden || refused) return;
        paused = true;
        clearTimeout(timer);
        if (ctrl) ctrl.abort();
        onState('paused', { resumed: false });
      }, PAUSE_HIDDEN);
    } else if (paused) {
      paused = false;
      delay = 250;
      connect();
    }
  };
  document.addEventListener('visibilitychange', onVisibility);
  const offToken = (() => {
    const fn = () => {
      if (!refused || closed) return;
      refused = false;
      delay = 250;
      connect();
    };
    tokenListeners.add(fn);
    return () => tokenListeners.delete(fn);
  })();

  const dispatch = (data, type) => {
    if (!data) return;
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    try {
      if (type === 'model') onModel(msg);
      else if (type === 'signals') onSignals(msg);
      else if (type === '' || type === 'message') onEvent(msg);
    } catch (e) { console.error('hookwatch: stream handler failed', e); }
  };

  async function connect() {
    if (closed || paused) return;
    onState('connecting', { resumed: false });
    ctrl = new AbortController();
    try {
      const h = headers({ Accept: 'text/event-stream' });
      const resumed = Boolean(last);
      if (last) h['Last-Event-ID'] = last;
      const res = await fetch(path, { headers: h, signal: ctrl.signal, cache: 'no-store' });
      if (res.status === 401) {
        // Trying again with the same token would be refused again.
        refused = true;
        onState('unauthorized', { resumed: false });
        authRequired(h);
        return;
      }
      if (!res.ok || !res.body) throw new HTTPError(res.status, 'stream: ' + res.status);
      onState('live', { resumed });
      delay = 250;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parse = sseParser({
        onEvent: (data, id, type) => { if (id !== null) last = id; dispatch(data, type); },
        onRetry: (ms) => { delay = Math.min(ms, 30000); },
      });
      openStreams(path, 1);
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parse(value);
        }
      } finally {
        openStreams(path, -1);
      }
    } catch (e) {
      if (closed || paused) return;
    }
    if (closed || paused) return;
    onState('retrying', { resumed: false });
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, 5000);
  }
  connect();
  return () => {
    closed = true;
    offToken();
    document.removeEventListener('visibilitychange', onVisibility);
    clearTimeout(timer);
    clearTimeout(pauseTimer);
    if (ctrl) ctrl.abort();
    return last;
  };
}

// openStreams counts the connections the page's streams hold open, by
// path, in window.__hw.streams: the browser tests read it.
function openStreams(path, d) {
  const hw = (window.__hw = window.__hw || {});
  const open = (hw.streams = hw.streams || {});
  open[path] = (open[path] || 0) + d;
  if (!open[path]) delete open[path];
}

/** PAUSE_HIDDEN is how long a stream keeps its connection while the page is hidden (stream). */
export const PAUSE_HIDDEN = 3000;

/**
 * sseParser returns a function that takes the text of a text/event-stream
 * chunk by chunk (split anywhere, even inside a CRLF) and calls
 * onEvent(data, id, type) for each event with data or an id, id being the
 * last id: field seen (or null) and type its event: field ('' when none),
 * and onRetry(ms) for retry: fields. It follows the WHATWG rules that
 * matter here: comments, multi-line data, a space after the colon, ids
 * without NUL, the event type reset after each event.
 */
export function sseParser({ onEvent, onRetry = () => {} }) {
  let buf = '';
  let data = [];
  let id = null;
  let type = '';
  let lastID = null;
  const line = (l) => {
    if (l === '') {
      if (id !== null) lastID = id;
      if (data.length || id !== null) onEvent(data.join('\n'), lastID, type);
      data = [];
      id = null;
      type = '';
      return;
    }
    if (l[0] === ':') return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let val = colon < 0 ? '' : l.slice(colon + 1);
    if (val[0] === ' ') val = val.slice(1);
    if (field === 'data') data.push(val);
    else if (field === 'event') type = val;
    else if (field === 'id' && !val.includes('\0')) id = val;
    else if (field === 'retry' && /^\d+$/.test(val)) onRetry(+val);
  };
  return (chunk) => {
    buf += chunk;
    // Scan with a cursor and cut the buffer once per chunk: a replay of
    // thousands of events arrives in large chunks.
    let pos = 0;
    for (;;) {
      let nl = -1;
      for (let i = pos; i < buf.length; i++) {
        const c = buf.charCodeAt(i);
        if (c === 10 || c === 13) { nl = i; break; }
      }
      if (nl < 0) break;
      // A CR at the end of the chunk may be the first half of a CRLF.
      if (buf.charCodeAt(nl) === 13 && nl === buf.length - 1) break;
      line(buf.slice(pos, nl));
      pos = nl + (buf.charCodeAt(nl) === 13 && buf.charCodeAt(nl + 1) === 10 ? 2 : 1);
    }
    buf = buf.slice(pos);
  };
}
