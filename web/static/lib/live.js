// The one connection to /v1/stream that the session list shares, the
// subscribers it fans model messages out to, and the state the page shows.
import { stream } from './api.js';

const stateListeners = new Set();
let close = null;
let state = 'idle';
let starting = null;

function setState(s) {
  state = s;
  stateListeners.forEach((fn) => fn(liveState()));
}

// The state of the stream of the session in view, when one is: what the
// page shows is then that stream's.
let shown = null;

/** liveState returns the state of the stream the page shows: idle, connecting, live or retrying. */
export function liveState() { return shown ?? state; }

/** showStreamState makes the page show the state of another stream (a session's), or again the shared one's (null). */
export function showStreamState(s) {
  shown = s;
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

/**
 * startLive opens the stream once. It starts at what is stored when it
 * connects, events and model changes alike: a caller that waits for the
 * promise (resolved once connected, or after a while if it cannot connect)
 * before reading its snapshot misses nothing in between.
 */
export function startLive() {
  if (starting) return starting;
  let connected;
  const live = new Promise((resolve) => { connected = resolve; });
  close = stream({
    onState: (s) => {
      setState(s);
      if (s === 'live') connected();
    },
    onModel: (msg) => modelSubscribers.forEach((fn) => fn(msg)),
  });
  starting = Promise.race([live, new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT))]);
  return starting;
}

/** CONNECT_WAIT is how long a page waits for a stream to connect before loading anyway. */
export const CONNECT_WAIT = 1500;
