// Preact + htm: tagged templates instead of JSX, so the sources run in the
// browser as they are. Every interpolated value becomes a text node or a
// property set through the DOM, never markup: payload text cannot inject.
import { h, render, Fragment, createRef } from '../vendor/preact.mjs';
import htm from '../vendor/htm.mjs';

// BIDI_CONTROLS are the characters that reorder the text after them
// (embeddings, overrides, isolates) and are not seen themselves: in a
// command, a path or a title they make the text on screen differ from the
// text the agent ran ("cat \u202Etxt.exe" reads "cat exe.txt"). The
// marks U+200E and U+200F, which move no letter of the text around them,
// are left to the right-to-left text that needs them.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
const HAS_BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

/** revealBidi writes each bidi control of s (BIDI_CONTROLS) as its code point, ⟨U+202E⟩. */
export function revealBidi(s) {
  return HAS_BIDI_CONTROL.test(s) ? s.replace(BIDI_CONTROLS, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase()}⟩`) : s;
}

// revealed returns child with the text it holds, in arrays at any depth,
// passed through revealBidi; child itself when there is nothing to reveal.
function revealed(child) {
  if (typeof child === 'string') return revealBidi(child);
  if (!Array.isArray(child)) return child;
  let out = child;
  for (let i = 0; i < child.length; i++) {
    const r = revealed(child[i]);
    if (r !== child[i]) {
      if (out === child) out = child.slice();
      out[i] = r;
    }
  }
  return out;
}

// TEXT_ATTRIBUTES are the attributes whose value is read as text: shown
// (the tooltip of title, a placeholder, an image's alt) or spoken by a
// screen reader (the aria- names and descriptions). A bidi control in one
// reorders what is read as it would in a text node.
const TEXT_ATTRIBUTES = ['title', 'aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext', 'aria-placeholder', 'placeholder', 'alt'];

// hShown is h for the views: every text child is revealed, and so is every
// attribute read as text (TEXT_ATTRIBUTES), so no view can show or speak a
// payload's text reordered by a control it hides.
function hShown(type, props, ...children) {
  for (let i = 0; i < children.length; i++) children[i] = revealed(children[i]);
  if (props) {
    for (const name of TEXT_ATTRIBUTES) {
      const v = props[name];
      if (typeof v === 'string' && HAS_BIDI_CONTROL.test(v)) {
        // A copy: the props object is the caller's.
        props = { ...props, [name]: revealBidi(v) };
      }
    }
  }
  return h(type, props, ...children);
}

export const html = htm.bind(hShown);
export { h, render, Fragment, createRef };
import { useRef, useLayoutEffect } from '../vendor/preact-hooks.mjs';
export { useState, useEffect, useLayoutEffect, useMemo, useRef, useCallback, useReducer } from '../vendor/preact-hooks.mjs';

/**
 * Select is a <select> whose shown value always follows value: options
 * that load later (or change order) would otherwise leave the browser
 * showing another option than the one applied. options are [value, label].
 */
export function Select({ value, options, onChange, label, class: cls }) {
  const ref = useRef(null);
  useLayoutEffect(() => {
    if (ref.current && ref.current.value !== value) ref.current.value = value;
  });
  return html`<select ref=${ref} class=${cls} aria-label=${label} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
    ${options.map(([v, l]) => html`<option key=${v} value=${v}>${l}</option>`)}
  </select>`;
}
