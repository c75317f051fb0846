// Preact + htm: tagged templates instead of JSX, so the sources run in the
// browser as they are. Every interpolated value becomes a text node or a
// property set through the DOM, never markup: payload text cannot inject.
import { h, render, Fragment, createRef } from '../vendor/preact.mjs';
import htm from '../vendor/htm.mjs';

export const html = htm.bind(h);
export { h, render, Fragment, createRef };
export { useState, useEffect, useLayoutEffect, useMemo, useRef, useCallback, useReducer } from '../vendor/preact-hooks.mjs';
