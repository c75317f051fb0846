// Preact + htm: tagged templates instead of JSX, so the sources run in the
// browser as they are. Every interpolated value becomes a text node or a
// property set through the DOM, never markup: payload text cannot inject.
import { h, render, Fragment, createRef } from '../vendor/preact.mjs';
import htm from '../vendor/htm.mjs';

export const html = htm.bind(h);
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
