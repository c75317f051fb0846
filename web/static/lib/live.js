// The one connection to /v1/stream that the session list (and the
// comparison) shares, the subscribers it fans model messages out to, and
// the state the page shows. It is open only while a view that shows it
// holds it (holdLive): a session's page follows its own stream, and the
// collector would otherwise keep serving the list's to a page that shows
// none of it. It asks for the model messages only (events=exclude): its
// views show sessions, never an event, and the collector would otherwise
// send them every event of every session, and replay all those stored
// while it was closed when it resumes.
import { stream, withQuery } from './api.js';

// LIST_STREAM is the shared stream's address: every session's model messages, no event.
const LIST_STREAM = withQuery('/v1/stream', { events: 'exclude' });

const stateListeners = new Set();
let close = null;
let state = 'idle';
// Callers of liveReady waiting for the stream to connect.
let waiters = [];
// The views that hold the stream open (holdLive).
let holders = 0;
// Where the stream left off when it was last closed ("" before it had a
// position): it opens again from there, as it reconnects.
let resumeFrom = '';
// Connection attempts since the page loaded, over every opening of the
// stream: any but the first that starts at what is stored (no position to
// resume from) may have missed what came in between.
let attempts = 0;

function setState(s) {
  state = s;
  if (s === 'live' || s === 'unauthorized') {
    waiters.forEach((fn) => fn());
    waiters = [];
  }
  stateListeners.forEach((fn) => fn(liveState()));
}

// The state of the stream of the session in view, when one is: what the
// page shows is then that stream's. shownBy is the view that set it.
let shown = null;
let shownBy = null;

/** liveState returns the state of the stream the page shows: idle, connecting, live, retrying, paused (the page hidden) or unauthorized. */
export function liveState() { return shown ?? state; }

/**
 * showStreamState makes the page show s, the state of another stream (a
 * session's) that the view by holds, or again the shared one's (s null)
 * when by is still the view shown: a view that goes may be let go of
 * after the one that comes has shown its own stream, which stays shown.
 */
export function showStreamState(s, by) {
  if (s === null && by !== shownBy) return;
  shown = s;
  shownBy = s === null ? null : by;
  stateListeners.forEach((fn) => fn(liveState()));
}

/** onLiveState calls fn on every change of the stream's state. */
export function onLiveState(fn) {
  stateListeners.add(fn);
  return () => stateListeners.delete(fn);
}

const modelSubscribers = new Set();

/** subscribeModel calls fn with every model message the stream delivers (a session's view that changed). */
export function subscribeModel(fn) {
  modelSubscribers.add(fn);
  return () => modelSubscribers.delete(fn);
}

const restartSubscribers = new Set();

/**
 * subscribeRestart calls fn when the stream connects again without a
 * position to resume from: it starts at what is stored then, and what
 * changed while it was away (or before it first connected) must be read
 * again.
 */
export function subscribeRestart(fn) {
  restartSubscribers.add(fn);
  return () => restartSubscribers.delete(fn);
}

/**
 * holdLive keeps the shared stream open until the function it returns is
 * called (by a view when it goes, say): the stream opens with the first
 * holder and closes with the last one. Opened again, it resumes from
 * where it left off (Last-Event-ID), as it does when it reconnects, so its
 * subscribers receive what changed while it was closed; when it had no
 * position to resume from, they are told to read again (subscribeRestart).
 */
export function holdLive() {
  holders++;
  if (!close) {
    close = stream({
      path: LIST_STREAM,
      lastEventId: resumeFrom || undefined,
      onState: (s, { resumed } = {}) => {
        if (s === 'connecting') attempts++;
        // Connected after a failed attempt (or after it was closed), from
        // what is stored now: the callers read before (or failed to) and
        // missed what came since.
        if (s === 'live' && attempts > 1 && !resumed) restartSubscribers.forEach((fn) => fn());
        setState(s);
      },
      onModel: (msg) => modelSubscribers.forEach((fn) => fn(msg)),
    });
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders > 0 || !close) return;
    resumeFrom = close() || resumeFrom;
    close = null;
    setState('idle');
  };
}

/**
 * liveReady resolves once the stream a view holds (holdLive) is connected
 * (or after a while if it cannot connect, or at once if the collector
 * wants a token). The stream starts at what is stored when it connects,
 * events and model changes alike: a caller that waits for the promise
 * before reading its snapshot misses nothing in between.
 */
export function liveReady() {
  if (state === 'live' || state === 'unauthorized') return Promise.resolve();
  return new Promise((resolve) => {
    waiters.push(resolve);
    // Given up on: out of the list, which a collector down for long would
    // otherwise grow by one at every view a user opens.
    setTimeout(() => {
      waiters = waiters.filter((w) => w !== resolve);
      resolve();
    }, CONNECT_WAIT);
  });
}

/** CONNECT_WAIT is how long a page waits for a stream to connect before loading anyway. */
export const CONNECT_WAIT = 1500;
