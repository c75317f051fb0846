// The one connection to /v1/stream that the whole page shares, and the
// subscribers it fans events out to.
import { stream, getJSON } from './api.js';

const subscribers = new Set();
const stateListeners = new Set();
let close = null;
let state = 'idle';
let position = null;
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

/**
 * subscribe calls fn with every event the stream delivers from now on.
 * Views subscribe before they load their snapshot and drop what the
 * snapshot already had (by seq), so nothing stored in between is missed.
 */
export function subscribe(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

/**
 * startLive opens the stream once, resuming after seq: any seq not larger
 * than the newest stored when the caller took its snapshot is safe. Without
 * a seq it asks the API for the most recently active session's last_seq.
 */
export function startLive(seq) {
  if (close || starting) return starting || Promise.resolve();
  starting = (async () => {
    if (seq == null) {
      try {
        const body = await getJSON('/v1/sessions?limit=1');
        const s = Array.isArray(body?.sessions) ? body.sessions[0] : null;
        seq = s && typeof s.last_seq === 'number' ? s.last_seq : 0;
      } catch {
        seq = 0;
      }
    }
    position = seq;
    close = stream({
      lastEventId: seq,
      onState: setState,
      onEvent: (ev) => {
        if (typeof ev?.seq === 'number') position = Math.max(position, ev.seq);
        subscribers.forEach((fn) => fn(ev));
      },
    });
    starting = null;
  })();
  return starting;
}

/** livePosition returns the largest seq the stream delivered (or started after). */
export function livePosition() { return position; }
