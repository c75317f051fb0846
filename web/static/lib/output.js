// Tool output for people. The hook keeps a tool's output as a preview by
// default: {"hookwatch_capture":"preview","bytes":N,"head":"…","tail":"…"},
// where head and tail are the first and last bytes of the output's JSON
// text. Shown as it is stored, that is JSON inside a JSON string: every
// newline a \\n and every quote a \". These functions decode it back into
// the text the tool printed.
import { plural } from './format.js';

/**
 * readable renders JSON text, possibly cut at either end, as indented
 * "key: value" lines with every string decoded: escapes resolved and
 * multi-line strings shown as lines. inString says the text starts inside
 * a string (a preview's tail usually does). It never throws.
 */
export function readable(text, inString = false) {
  const out = [];
  let line = '';
  let depth = 0;
  let i = 0;
  const n = text.length;
  const indent = () => '  '.repeat(Math.max(0, depth));
  const flush = () => {
    if (line.trim()) out.push(line.replace(/\s+$/, ''));
    line = '';
  };
  // readString decodes a string body from i up to its closing quote (or the
  // end of the text) and returns it.
  const readString = () => {
    let s = '';
    while (i < n) {
      const c = text[i];
      if (c === '"') { i++; break; }
      if (c !== '\\') { s += c; i++; continue; }
      const e = text[i + 1];
      if (e === undefined) { i = n; break; } // cut inside an escape
      i += 2;
      switch (e) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'u': {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) { i = n; break; } // cut inside \uXXXX
          s += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default: s += e; // \" \\ \/ and anything else as itself
      }
    }
    return s;
  };
  const value = (s) => {
    if (!s.includes('\n')) { line += s; return; }
    // A multi-line string: its lines under the key, indented.
    flush();
    for (const l of s.replace(/\r\n?/g, '\n').split('\n')) out.push(indent() + '  ' + l);
  };
  if (inString) value(readString());
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      i++;
      const s = readString();
      let j = i;
      while (j < n && /\s/.test(text[j])) j++;
      if (text[j] === ':') {
        flush();
        line = indent() + s + ': ';
        i = j + 1;
      } else {
        if (!line.trim()) line = indent();
        value(s);
      }
    } else if (c === '{' || c === '[') {
      if (line.trim()) flush();
      depth++;
      i++;
    } else if (c === '}' || c === ']') {
      flush();
      depth--;
      i++;
    } else if (c === ',') {
      flush();
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      // A number, true, false or null.
      let j = i;
      while (j < n && !/[\s,\]}]/.test(text[j])) j++;
      if (!line.trim()) line = indent();
      line += text.slice(i, j);
      i = j;
    }
  }
  flush();
  // Dedent to the least indented line: a cut text may start deep inside.
  const min = Math.min(...out.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
  return out.map((l) => l.slice(Number.isFinite(min) ? min : 0)).join('\n');
}

// startsInString guesses whether a preview's tail starts inside a string:
// when its first unescaped quote is followed by what ends a string value
// (a comma, a closing bracket, the end) rather than by more JSON text.
function startsInString(tail) {
  for (let i = 0; i < tail.length; i++) {
    if (tail[i] === '\\') { i++; continue; }
    if (tail[i] !== '"') continue;
    const rest = tail.slice(i + 1).trimStart();
    return rest === '' || /^[,}\]]/.test(rest);
  }
  return true; // no quote at all: the middle of one long string
}

/** isPreview reports whether a stored tool_response is hookwatch's capture object. */
export function isPreview(v) {
  return v != null && typeof v === 'object' && !Array.isArray(v) && typeof v.hookwatch_capture === 'string';
}

/**
 * outputView returns how to show a stored tool_response: { text, note } for
 * text shown as it is (a string, or a decoded preview, with a note on what
 * was kept), or { json } for a value best shown as JSON.
 */
export function outputView(v) {
  if (typeof v === 'string') return { text: v, note: '' };
  if (!isPreview(v)) return { json: v };
  const bytes = typeof v.bytes === 'number' ? v.bytes : NaN;
  const size = Number.isFinite(bytes) ? plural(bytes, 'byte') : 'unknown size';
  if (v.hookwatch_capture !== 'preview') return { text: '', note: `Output not captured (${size}; see HOOKWATCH_CAPTURE).` };
  const head = typeof v.head === 'string' ? v.head : '';
  const tail = typeof v.tail === 'string' ? v.tail : '';
  if (!tail) {
    // The whole output fitted: it is valid JSON, unless cut by a budget.
    try {
      const whole = JSON.parse(head);
      return typeof whole === 'string' ? { text: whole, note: '' } : { text: readable(head), note: '' };
    } catch { /* cut: decode leniently */ }
    return { text: readable(head), note: `Preview of ${size}.` };
  }
  const kept = new TextEncoder().encode(head + tail).length;
  const gap = Number.isFinite(bytes) ? plural(Math.max(0, bytes - kept), 'byte') : 'the middle';
  return { text: readable(head) + `\n… ${gap} not kept …\n` + readable(tail, startsInString(tail)), note: `Preview: the first and last bytes of ${size}.` };
}
