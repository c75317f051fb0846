// A virtualised list: only the rows in view (plus a margin) are in the DOM,
// so 10,000 sessions or 20,000 events scroll as fast as 50.
import { html, useState, useEffect, useRef, useLayoutEffect } from './html.js';

/**
 * VList renders items[i] with row(item, i) in rows of a fixed height.
 * The scroll container fills its parent (give the parent a height).
 * scrollTo, when it changes, brings that index into view.
 */
export function VList({ items, rowHeight, row, overscan = 8, class: cls = '', scrollTo = -1, label = '' }) {
  const ref = useRef(null);
  const [view, setView] = useState({ top: 0, height: 600 });

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setView({ top: el.scrollTop, height: el.clientHeight || 600 });
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

  useEffect(() => {
    const el = ref.current;
    if (!el || scrollTo < 0) return;
    const y = scrollTo * rowHeight;
    if (y < el.scrollTop || y + rowHeight > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, y - el.clientHeight / 2);
    }
  }, [scrollTo, rowHeight]);

  const n = items.length;
  const first = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const last = Math.min(n, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) rows.push(row(items[i], i));
  return html`
    <div class=${'vlist ' + cls} ref=${ref} role="list" aria-label=${label} data-count=${n}>
      <div class="vlist-space" style=${{ height: n * rowHeight + 'px' }}>
        <div class="vlist-rows" style=${{ transform: `translateY(${first * rowHeight}px)` }}>${rows}</div>
      </div>
    </div>`;
}
