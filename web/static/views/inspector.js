// The inspector: details of the selected tool call, event or agent.
import { html } from '../lib/html.js';
import { MAIN, payloadOf, decisionOf, durationOf, agentEnd, eventSummary, eventName, outputOf, callsTouching, callStatusLabel } from '../lib/model.js';
import { outputView } from '../lib/output.js';
import { fmtDur, fmtISO, fmtNum, plural, shortID, familyColor, EFFECT_COLORS } from '../lib/format.js';
import { JSONView } from './json.js';
import { agentLabel } from './timeline.js';

function Field({ k, children }) {
  return html`<div class="kv"><span class="k">${k}</span><span class="v">${children}</span></div>`;
}

function AgentLink({ model, id, onSelect }) {
  const a = model.agents.get(id);
  const label = a ? agentLabel(a) : 'agent';
  return html`<button type="button" class="link" onClick=${() => onSelect({ kind: 'agent', id })}>${label}${id ? ' ' + shortID(id, 10) : ''}</button>`;
}

function CallLink({ model, id, onSelect }) {
  const c = model.calls.get(id);
  return html`<button type="button" class="link" onClick=${() => onSelect({ kind: 'call', id })}>${c ? c.tool + ' ' : ''}${shortID(id, 14)}</button>`;
}

function Raw({ ev, title }) {
  return html`<details class="raw"><summary>${title} <span class="muted">· seq ${ev.seq}</span></summary><${JSONView} value=${ev.envelope} label=${title} /></details>`;
}

/** Output shows a call's output as the tool printed it: strings and hookwatch's previews decoded. */
function Output({ model, c, eventsLoading }) {
  const out = outputOf(model, c.id);
  if (!out.found) {
    if (eventsLoading) return html`<p class="muted">Loading the call's events…</p>`;
    if (model.noOutcome(c)) return html`<p class="muted">None: the session ended before the call's outcome was reported.</p>`;
    if (c.status === 'pending') return html`<p class="muted">None yet: the call is running.</p>`;
    if (c.status !== 'ok') return html`<p class="muted">None: the call did not complete (${c.status}).</p>`;
    return html`<p class="muted">Not captured (see HOOKWATCH_CAPTURE).</p>`;
  }
  const v = outputView(out.value);
  if (v.json !== undefined) return html`<${JSONView} value=${v.json} label="output" />`;
  return html`
    ${v.note && html`<p class="muted">${v.note}</p>`}
    ${v.text && html`<${JSONView} text=${v.text} label="output" />`}`;
}

function Decision({ d }) {
  if (!d) return null;
  const rules = Array.isArray(d.rule_ids) ? d.rule_ids.filter((x) => typeof x === 'string') : [];
  return html`<section class="isec">
    <h4>Policy decision</h4>
    <${Field} k="action"><span class=${'pill pill-' + (d.action === 'deny' || d.action === 'block' ? 'denied' : 'ok')}>${String(d.action ?? '')}</span>${d.enforced === false ? ' (recorded only)' : ''}<//>
    ${rules.length > 0 && html`<${Field} k="rules">${rules.join(', ')}<//>`}
    ${typeof d.reason === 'string' && d.reason && html`<${Field} k="reason"><span class="pre">${d.reason}</span><//>`}
  </section>`;
}

function Effect({ e }) {
  if (!e) return null;
  return html`<span class="effect" style=${{ borderColor: EFFECT_COLORS[e] || '#79706e', color: EFFECT_COLORS[e] || 'inherit' }}>${e}</span>`;
}

const list = (l) => (Array.isArray(l) ? l.filter((x) => typeof x === 'string') : []);

/** Steps lists the steps of a shell command's analysis, each with its effect. */
function Steps({ cmd }) {
  const steps = Array.isArray(cmd.steps) ? cmd.steps.filter((s) => s && typeof s === 'object') : [];
  return html`<section class="isec" data-testid="command-steps"><h4>Command <span class="muted">(${plural(steps.length, 'step')})</span></h4>
    ${cmd.unknown && html`<p class="pre">Not fully analysed: ${String(cmd.reason ?? '')} (counted destructive)</p>`}
    <table class="mini steps"><thead><tr><th>program</th><th>arguments</th><th>effect</th><th>writes</th><th>reads</th></tr></thead><tbody>
      ${steps.map((s, i) => html`<tr key=${i}>
        <td><code>${typeof s.program === 'string' && s.program ? s.program : '(dynamic)'}</code>${list(s.via).length > 0 && html`<div class="muted">via ${list(s.via).join(', ')}</div>`}</td>
        <td class="pre">${list(s.args).join(' ')}</td>
        <td><${Effect} e=${typeof s.effect === 'string' ? s.effect : ''} />${typeof s.why === 'string' && s.why && html`<div class="muted">${s.why}</div>`}</td>
        <td class="pre">${list(s.writes).join('\n')}</td>
        <td class="pre">${list(s.reads).join('\n')}${list(s.hosts).length > 0 && html`<div>${list(s.hosts).join(' ')}</div>`}</td>
      </tr>`)}
    </tbody></table>
  </section>`;
}

/** Files lists the files a call read and wrote, each with the other calls of the session that touched it. */
function Files({ model, c, onSelect }) {
  if (!c.filesRead.length && !c.filesWritten.length) return null;
  const row = (path, how) => {
    const others = callsTouching(model, path, c.id);
    return html`<tr key=${how + path}><td class="muted">${how}</td><td><code>${path}</code>
      ${others.length > 0 && html`<div>${others.slice(0, 8).map((o) => html`<${CallLink} key=${o.id} model=${model} id=${o.id} onSelect=${onSelect} /> `)}${others.length > 8 ? `… ${others.length - 8} more` : ''}</div>`}</td></tr>`;
  };
  return html`<section class="isec" data-testid="call-files"><h4>Files</h4>
    <table class="mini"><tbody>${c.filesWritten.map((p) => row(p, 'writes'))}${c.filesRead.map((p) => row(p, 'reads'))}</tbody></table>
  </section>`;
}

function CallDetails({ model, c, onSelect, onFocus, eventsLoading }) {
  const dur = durationOf(c);
  const events = model.eventsOf(c.id);
  const denied = c.raw && typeof c.raw.permission_denied === 'object' && c.raw.permission_denied ? c.raw.permission_denied : null;
  // Codex: the exit code read from its rollout, and the files a patch touches.
  const exit = c.raw && Number.isInteger(c.raw.exit_code) ? c.raw.exit_code : null;
  const files = c.raw && Array.isArray(c.raw.files) ? c.raw.files.filter((f) => f && typeof f.path === 'string') : [];
  return html`
    <header class="ihead">
      <span class="fam" style=${{ background: familyColor(c.subtype || c.family) }}></span>
      <h3>${c.tool || 'tool call'}</h3>
      <span class=${'pill pill-' + (model.noOutcome(c) ? 'nooutcome' : c.status)} data-testid="call-status">${callStatusLabel(c, model)}</span>
      ${onFocus && html`<button type="button" class="zoomto" onClick=${() => onFocus(c.id)}>show on timeline</button>`}
    </header>
    <section class="isec">
      <${Field} k="agent"><${AgentLink} model=${model} id=${c.agent} onSelect=${onSelect} /><//>
      <${Field} k="tool_use_id"><code>${c.id}</code><//>
      <${Field} k="family">${c.family}<//>
      ${c.subtype && html`<${Field} k="subtype">${c.subtype}${c.group ? html` <span class="muted">(${c.group})</span>` : ''}<//>`}
      ${c.effect && html`<${Field} k="effect"><${Effect} e=${c.effect} />${c.importance ? html` <span class="muted">importance ${c.importance}</span>` : ''}<//>`}
      ${c.entity && html`<${Field} k="on"><span class="pre">${c.entity}</span><//>`}
      <${Field} k="started">${fmtISO(c.start)}<//>
      <${Field} k="ended">${Number.isFinite(c.end) ? fmtISO(c.end) : model.noOutcome(c) ? 'no outcome reported' : c.status === 'pending' ? 'running' : '–'}<//>
      <${Field} k="duration">${fmtDur(dur)}<//>
      ${c.promptId && html`<${Field} k="prompt_id"><code>${c.promptId}</code><//>`}
      ${c.parentCall && html`<${Field} k="parent call"><${CallLink} model=${model} id=${c.parentCall} onSelect=${onSelect} /><//>`}
      ${c.spawned && html`<${Field} k="spawned"><${AgentLink} model=${model} id=${c.spawned} onSelect=${onSelect} /><//>`}
      ${exit !== null && html`<${Field} k="exit code">${exit}<//>`}
      ${files.length > 0 && html`<${Field} k="files">${files.map((f) => `${String(f.op ?? '')} ${f.path}${typeof f.move_to === 'string' ? ' → ' + f.move_to : ''}`).join(', ')}<//>`}
      ${denied && typeof denied.reason === 'string' && denied.reason && html`<${Field} k="denied by the client"><span class="pre">${denied.reason}</span><//>`}
    </section>
    <${Decision} d=${c.decision} />
    ${c.command && html`<${Steps} cmd=${c.command} />`}
    <${Files} model=${model} c=${c} onSelect=${onSelect} />
    ${c.error && html`<section class="isec"><h4>Error</h4><${JSONView} text=${c.error} label="error" /></section>`}
    <section class="isec"><h4>Input <span class="muted">(as stored: redacted)</span></h4>
      ${c.input !== undefined ? html`<${JSONView} value=${c.input} label="input" />` : html`<p class="muted">No input recorded.</p>`}
    </section>
    <section class="isec"><h4>Output</h4><${Output} model=${model} c=${c} eventsLoading=${eventsLoading} /></section>
    <section class="isec"><h4>Raw events</h4>
      ${events.map((ev) => html`<${Raw} key=${ev.seq} ev=${ev} title=${eventName(ev) || 'event'} />`)}
      ${!events.length && html`<p class="muted">${eventsLoading ? 'Loading…' : 'None stored with this tool_use_id.'}</p>`}
    </section>`;
}

function EventDetails({ model, ev, onSelect }) {
  const p = payloadOf(ev);
  const d = decisionOf(ev);
  const summary = eventSummary(ev);
  return html`
    <header class="ihead"><h3>${eventName(ev) || ev.kind || 'event'}</h3></header>
    <section class="isec">
      <${Field} k="agent"><${AgentLink} model=${model} id=${ev.agent_id || MAIN} onSelect=${onSelect} /><//>
      <${Field} k="time">${String(ev.time ?? '')}<//>
      <${Field} k="seq">${ev.seq}<//>
      <${Field} k="id"><code>${String(ev.id ?? '')}</code><//>
      ${ev.tool_use_id && html`<${Field} k="tool call"><${CallLink} model=${model} id=${ev.tool_use_id} onSelect=${onSelect} /><//>`}
      ${ev.prompt_id && html`<${Field} k="prompt_id"><code>${ev.prompt_id}</code><//>`}
    </section>
    ${summary && html`<section class="isec"><h4>Summary</h4><p class="pre">${summary}</p></section>`}
    <${Decision} d=${d} />
    <section class="isec"><h4>Payload</h4><${JSONView} value=${p} label="payload" /></section>
    <details class="raw"><summary>Envelope</summary><${JSONView} value=${ev.envelope} label="envelope" /></details>`;
}

function AgentDetails({ model, a, onSelect, onFilter }) {
  const dur = agentEnd(a, model.t1) - a.start;
  const byTool = new Map();
  for (const c of a.calls) byTool.set(c.tool, (byTool.get(c.tool) || 0) + 1);
  const tools = [...byTool.entries()].sort((x, y) => y[1] - x[1]);
  const counts = [a.failures !== undefined && `${fmtNum(a.failures)} failed`, a.rejected !== undefined && `${fmtNum(a.rejected)} rejected`, a.denials !== undefined && `${fmtNum(a.denials)} denied`].filter(Boolean);
  return html`
    <header class="ihead"><h3>${agentLabel(a)}</h3>${a.id && html`<code class="muted">${a.id}</code>`}</header>
    <section class="isec">
      <${Field} k="type">${a.id === MAIN ? 'main agent' : a.type == null ? 'unknown' : a.type === '' ? '"" (compaction agent)' : a.type}<//>
      ${a.id !== MAIN && html`<${Field} k="parent"><${AgentLink} model=${model} id=${a.parentId ?? MAIN} onSelect=${onSelect} /><//>`}
      ${a.spawn && html`<${Field} k="spawned by"><${CallLink} model=${model} id=${a.spawn} onSelect=${onSelect} /><//>`}
      ${a.description && html`<${Field} k="description">${a.description}<//>`}
      <${Field} k="started">${fmtISO(a.start)}<//>
      <${Field} k="stopped">${Number.isFinite(a.stop) ? fmtISO(a.stop) : model.over() ? 'no stop reported' : 'running'}${a.stopError && html` <span class="pill pill-failed" data-testid="agent-stop-error" title="its model request failed: the client's retries did not get past the API error">failed: ${a.stopError}</span>`}<//>
      <${Field} k="duration">${fmtDur(dur)}<//>
      <${Field} k="tool calls">${plural(a.toolCount ?? a.calls.length, 'call')}${counts.length ? ` (${counts.join(', ')})` : ''}<//>
      <${Field} k="events">${fmtNum(a.events)}<//>
      ${a.raw && a.raw.usage && html`<${Field} k="tokens"><span data-testid="agent-tokens">${fmtNum(a.raw.usage.input_tokens)} in · ${fmtNum(a.raw.usage.output_tokens)} out · ${fmtNum(a.raw.usage.cache_read_tokens)} cache read${a.raw.usage.unpriced ? '' : ` · $${a.raw.usage.cost_usd.toFixed(4)}`}</span><//>`}
      ${a.lastMessage && html`<${Field} k="last message"><span class="pre">${a.lastMessage}</span><//>`}
    </section>
    ${model.signals.get(a.id)?.signals.length > 0 && html`<section class="isec" data-testid="agent-signal-list"><h4>Signals</h4>
      ${model.signals.get(a.id).signals.map((s, k) => html`<p key=${k}><b>${s.kind.replace('_', ' ')}</b>: ${s.detail} ${s.calls.slice(0, 6).map((c) => html`<${CallLink} key=${c} model=${model} id=${c} onSelect=${onSelect} /> `)}</p>`)}
      ${model.signals.get(a.id).failuresInARow > 0 && html`<p class="muted">${plural(model.signals.get(a.id).failuresInARow, 'failure')} in a row</p>`}
    </section>`}
    <section class="isec"><h4>Tools</h4>
      <table class="mini"><tbody>${tools.map(([t, n]) => html`<tr><td>${t}</td><td class="num">${n}</td></tr>`)}</tbody></table>
    </section>
    <button type="button" onClick=${() => onFilter({ agent: a.id })}>Show only this agent</button>`;
}

/** Inspector shows the selection; onSelect moves it, onClose clears it. */
export function Inspector({ model, loading, eventsLoading, selected, onSelect, onClose, onFilter, onFocus }) {
  // A link can name what the session does not have (a mistyped or cut
  // address): say which, so the reader knows the link, not the page, is wrong.
  const what = selected.kind === 'call' ? `no call ${selected.id}` : selected.kind === 'event' ? `no event #${selected.seq}`
    : `no agent ${selected.id === MAIN ? 'main' : selected.id}`;
  let body = loading || (selected.kind === 'event' && eventsLoading) ? html`<p class="muted">Loading…</p>`
    : html`<p class="muted" data-testid="not-in-session">This session has ${what}.</p>`;
  if (selected.kind === 'call') {
    const c = model.calls.get(selected.id);
    if (c) body = html`<${CallDetails} model=${model} c=${c} onSelect=${onSelect} onFocus=${onFocus} eventsLoading=${eventsLoading} />`;
  } else if (selected.kind === 'event') {
    const ev = model.bySeq.get(selected.seq);
    if (ev) body = html`<${EventDetails} model=${model} ev=${ev} onSelect=${onSelect} />`;
  } else if (selected.kind === 'agent') {
    const a = model.agents.get(selected.id);
    if (a) body = html`<${AgentDetails} model=${model} a=${a} onSelect=${onSelect} onFilter=${onFilter} />`;
  }
  return html`
    <aside class="inspector" data-testid="inspector" aria-label="Details">
      <button type="button" class="close" aria-label="Close details" onClick=${onClose}>×</button>
      ${body}
    </aside>`;
}
