// A virtualised list: only the rows in view (plus a margin) are in the DOM,
// so 10,000 sessions or 20,000 events scroll as fast as 50.
import { html, useState, useEffect, useRef, useLayoutEffect } from './html.js';

/**
 * VList renders items[i] with row(item, i) in rows of a fixed height.
 * The scroll container fills its parent (give the parent a height).
 * scrollTo, when it changes, brings that index into view.
 *
 * keyOf(item), when given, names the items, and the list keeps the rows in
 * view in place when items change above them, as a live list does: a row
 * the pointer is on, or the eye reads, stays there rather than sliding down
 * under it. Scrolled to the top, the list shows what comes in at the top.
 * place, given with keyOf, is where the list was left: an object the list
 * keeps up to date ({ key, offset }: the row at the top of the view, and how
 * far it is scrolled past), and scrolls back to when it is drawn again (back
 * from another view).
 *
 * reveal, an object { index } made anew for each move (a key pressed),
 * scrolls that row just into view, at the edge it was past, as a
 * keyboard's selection moves: unlike scrollTo, it does not centre it, and
 * the same index asked again is brought into view again. role (list by
 * default) and attrs (more attributes of the scrolling element: a
 * listbox's tabindex, aria-activedescendant, onKeyDown) make it a widget.
 */
export function VList({ items, rowHeight, row, overscan = 8, class: cls = '', scrollTo = -1, label = '', keyOf = null, place = null, reveal = null, role = 'list', attrs = null }) {
  const ref = useRef(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  // The items drawn last, and the scroll position they were drawn at: to
  // find the rows in view again when the items change.
  const drawn = useRef({ items: null, top: 0 });
  const props = useRef({});
  props.current = { items, rowHeight, keyOf, place };

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      const { items, rowHeight, keyOf, place } = props.current;
      if (keyOf && place) {
        const i = Math.floor(el.scrollTop / rowHeight);
        place.key = el.scrollTop > 0 && i < items.length ? keyOf(items[i]) : '';
        place.offset = el.scrollTop - i * rowHeight;
      }
      setView({ top: el.scrollTop, height: el.clientHeight || 600 });
    };
    // Drawn again: back where it was left.
    const { items, rowHeight, keyOf, place } = props.current;
    if (keyOf && place && place.key) {
      const i = items.findIndex((it) => keyOf(it) === place.key);
      if (i >= 0) el.scrollTop = i * rowHeight + place.offset;
    }
    update();
    let raf = 0;
    const onScroll = () => {
      if (raf) return;
      raf = requestAnimationFrame(() => { raf = 0; update(); });
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => {
      el.removeEventListener('scroll', onScroll);
      ro.disconnect();
      cancelAnimationFrame(raf);
    };
  }, []);

  // The items changed while scrolled down: the first row in view that did
  // not move up (moving up is what a row that came alive does; the others
  // only slide down, by what came in above them) stays where it was. The
  // browser's own scroll anchoring is off (overflow-anchor), as it would
  // move the view a second time for a row it sees drawn again above.
  useLayoutEffect(() => {
    const el = ref.current;
    const prev = drawn.current.items;
    drawn.current.items = items;
    if (!el || !keyOf || !prev || prev === items || el.scrollTop <= 0) return;
    const top = el.scrollTop;
    const first = Math.floor(top / rowHeight);
    const last = Math.min(prev.length, Math.ceil((top + el.clientHeight) / rowHeight));
    const now = new Map();
    for (let i = 0; i < items.length; i++) now.set(keyOf(items[i]), i);
    for (let i = first; i < last; i++) {
      const j = now.get(keyOf(prev[i]));
      if (j === undefined || j < i) continue;
      if (j !== i) el.scrollTop = top + (j - i) * rowHeight;
      break;
    }
  }, [items]);

  useEffect(() => {
    const el = ref.current;
    if (!el || scrollTo < 0) return;
    const y = scrollTo * rowHeight;
    if (y < el.scrollTop || y + rowHeight > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, y - el.clientHeight / 2);
    }
  }, [scrollTo, rowHeight]);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !reveal || !(reveal.index >= 0)) return;
    const y = reveal.index * rowHeight;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = y + rowHeight - el.clientHeight;
    // Drawn at once, not a frame later from the scroll event: the row
    // selected is in the page when the focus is told of it.
    setView({ top: el.scrollTop, height: el.clientHeight || 600 });
  }, [reveal]);

  const n = items.length;
  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(n, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) rows.push(row(items[i], i));
  return html`
    <div class=${'vlist ' + cls} ref=${ref} role=${role} aria-label=${label} ...${attrs || {}} data-count=${n} style=${keyOf ? { overflowAnchor: 'none' } : undefined}>
      <div class="vlist-space" style=${{ height: n * rowHeight + 'px' }}>
        <div class="vlist-rows" style=${{ transform: `translateY(${first * rowHeight}px)` }}>${rows}</div>
      </div>
    </div>`;
}
