// Pretty JSON with light highlighting. Every token is a text node in a
// span made by Preact: the payload is shown, never parsed as markup.
import { html, useState, useMemo } from '../lib/html.js';

const TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const LIMIT = 60000;

/** pretty renders a value as indented JSON; strings that hold JSON stay strings. */
export function pretty(value) {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function tokens(text) {
  const out = [];
  let last = 0;
  TOKEN.lastIndex = 0;
  let m;
  while ((m = TOKEN.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) {
      out.push(html`<span class=${m[2] ? 'jk' : 'js'}>${m[1]}</span>`);
      if (m[2]) out.push(m[2]);
    } else if (m[3]) {
      out.push(html`<span class="jl">${m[0]}</span>`);
    } else {
      out.push(html`<span class="jn">${m[0]}</span>`);
    }
    last = TOKEN.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** JSONView shows value (or text, for plain strings) with a size limit the user can lift. */
export function JSONView({ value, text, label = '' }) {
  const [all, setAll] = useState(false);
  const src = useMemo(() => (text != null ? String(text) : pretty(value)), [value, text]);
  const cut = !all && src.length > LIMIT;
  const shown = cut ? src.slice(0, LIMIT) : src;
  const body = useMemo(() => (text != null || shown.length > LIMIT * 2 ? shown : tokens(shown)), [shown, text]);
  return html`
    <div class="jsonwrap">
      <pre class="json" aria-label=${label}>${body}</pre>
      ${cut && html`<button type="button" class="more" onClick=${() => setAll(true)}>show all ${(src.length / 1024).toFixed(0)} KB</button>`}
    </div>`;
}
