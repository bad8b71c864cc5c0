// The pages. Each mounts into <main>, subscribes to the kinds it shows and
// re-renders its live part when they change; it returns its cleanup.

import { request, can, reviewListeners, APIError, stream } from './api.js';
import { watch } from './store.js';
import { toYAML } from './yaml.js';
import { morph } from './morph.js';

// K are the kinds the dashboard shows.
export const K = {
  namespaces: { base: '/api/v1', group: '', resource: 'namespaces', kind: 'Namespace' },
  nodes: { base: '/api/v1', group: '', resource: 'nodes', kind: 'Node' },
  pods: { base: '/api/v1', group: '', resource: 'pods', namespaced: true, kind: 'Pod' },
  events: { base: '/api/v1', group: '', resource: 'events', namespaced: true, kind: 'Event' },
  services: { base: '/api/v1', group: '', resource: 'services', namespaced: true, kind: 'Service' },
  configmaps: { base: '/api/v1', group: '', resource: 'configmaps', namespaced: true, kind: 'ConfigMap' },
  // Secrets come as Table rows: their data never reaches the browser unless edited.
  secrets: { base: '/api/v1', group: '', resource: 'secrets', namespaced: true, table: true, kind: 'Secret' },
  endpointslices: { base: '/apis/discovery.k8s.io/v1', group: 'discovery.k8s.io', resource: 'endpointslices', namespaced: true, kind: 'EndpointSlice' },
  deployments: { base: '/apis/apps/v1', group: 'apps', resource: 'deployments', namespaced: true, scale: true, restart: true, kind: 'Deployment' },
  statefulsets: { base: '/apis/apps/v1', group: 'apps', resource: 'statefulsets', namespaced: true, scale: true, restart: true, kind: 'StatefulSet' },
  daemonsets: { base: '/apis/apps/v1', group: 'apps', resource: 'daemonsets', namespaced: true, restart: true, kind: 'DaemonSet' },
  jobs: { base: '/apis/batch/v1', group: 'batch', resource: 'jobs', namespaced: true, kind: 'Job' },
  cronjobs: { base: '/apis/batch/v1', group: 'batch', resource: 'cronjobs', namespaced: true, kind: 'CronJob' },
  crds: { base: '/apis/apiextensions.k8s.io/v1', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition' },
};

// ---- helpers ---------------------------------------------------------------

export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

export function age(ts) {
  if (!ts) return '';
  let s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  if (s < 120) return s + 's';
  s = Math.floor(s / 60);
  if (s < 120) return s + 'm';
  s = Math.floor(s / 60);
  if (s < 48) return s + 'h';
  return Math.floor(s / 24) + 'd';
}

export function objPath(kind, ns, name) {
  return kind.base + (kind.namespaced && ns ? `/namespaces/${encodeURIComponent(ns)}` : '') + '/' + kind.resource + (name ? '/' + encodeURIComponent(name) : '');
}

function id(...parts) { return parts.join('-').replace(/[^A-Za-z0-9_-]/g, '_'); }

function scopeWords(ns) { return ns ? ` in namespace ${ns}` : ''; }

// listProblem says why a collection shows nothing: "You may not list secrets"
// with the server's own words, not an empty table.
function listProblem(c) {
  if (!c.error) return '';
  const e = c.error;
  if (e.code === 403) {
    return `<p class="forbidden" role="alert"><strong>You may not list ${esc(c.kind.resource)}${esc(scopeWords(c.namespace))}.</strong> <span class="k8s">${esc(e.message)}</span></p>`;
  }
  return `<p class="error" role="alert">${esc(e.message)}</p>`;
}

function table(label, head, rows, empty) {
  const th = head.map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const body = rows.length ? rows.join('') : `<tr><td colspan="${head.length}" class="muted">${esc(empty || 'None')}</td></tr>`;
  return `<div class="scroll"><table aria-label="${esc(label)}"><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function section(title, c, content) {
  const sid = id('h', title);
  return `<section aria-labelledby="${sid}"><h2 id="${sid}">${esc(title)}</h2>${c ? listProblem(c) : ''}${c && c.error ? '' : content}</section>`;
}

function sorted(c) {
  return [...c.items.values()].sort((a, b) => {
    const ma = a.metadata || a.object.metadata, mb = b.metadata || b.object.metadata;
    return (ma.namespace || '').localeCompare(mb.namespace || '') || ma.name.localeCompare(mb.name);
  });
}

// shownReasons are the refused verbs and resources already shown visibly in
// the current drawing.
const shownReasons = new Set();

// actionButton is a button for verb on kind/ns/name that the server decides
// the user may use; when it may not, the button is disabled and says why.
function actionButton(act, label, kind, ns, name, verb, sub, extra = '') {
  const allowed = can(verb, kind.group, kind.resource, ns, sub);
  const bid = id('act', act, kind.resource, ns, name);
  const data = `data-act="${act}" data-kind="${esc(kindKey(kind))}" data-ns="${esc(ns || '')}" data-name="${esc(name)}" ${extra}`;
  if (allowed === undefined) return `<button type="button" id="${bid}" disabled ${data}>${esc(label)}</button>`;
  if (!allowed.allowed) {
    const what = kind.resource + (sub ? '/' + sub : '');
    const why = `You may not ${verb} ${what}${scopeWords(ns)}`;
    // Each refused verb and resource shows once per page; later buttons keep
    // the reason for assistive technology (aria-describedby) and as a tooltip.
    const cls = shownReasons.has(verb + ' ' + what) ? 'why sr-only' : 'why';
    shownReasons.add(verb + ' ' + what);
    return `<button type="button" id="${bid}" disabled aria-describedby="${bid}-why" title="${esc(why)}" ${data}>${esc(label)}</button><span class="${cls}" id="${bid}-why">${esc(why)}</span>`;
  }
  return `<button type="button" id="${bid}" ${data}>${esc(label)}</button>`;
}

const customKinds = new Map();
function kindKey(kind) {
  for (const [k, v] of Object.entries(K)) if (v === kind) return k;
  const key = kind.base + '/' + kind.resource;
  customKinds.set(key, kind);
  return key;
}
function kindOf(key) { return K[key] || customKinds.get(key); }

// ---- quantities --------------------------------------------------------------

const suffix = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };
export function quantity(q) {
  if (q === undefined || q === null) return 0;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)$/.exec(String(q));
  if (!m) return 0;
  return parseFloat(m[1]) * (suffix[m[2]] || 1);
}
function cores(v) { return v < 1 ? Math.round(v * 1000) + 'm' : (Math.round(v * 100) / 100) + ''; }
function mem(v) {
  if (v >= 2 ** 30) return (Math.round((v / 2 ** 30) * 10) / 10) + 'Gi';
  return Math.round(v / 2 ** 20) + 'Mi';
}

// ---- pod status ---------------------------------------------------------------

function cond(o, type) { return (o.status?.conditions || []).find((c) => c.type === type); }

export function podStatus(p) {
  if (p.metadata.deletionTimestamp) return 'Terminating';
  for (const cs of p.status?.containerStatuses || []) {
    if (cs.state?.waiting?.reason && cs.state.waiting.reason !== 'ContainerCreating') return cs.state.waiting.reason;
    if (cs.state?.terminated?.reason && p.status.phase === 'Running') return cs.state.terminated.reason;
  }
  return p.status?.reason || p.status?.phase || 'Unknown';
}

function podReady(p) {
  const cs = p.status?.containerStatuses || [];
  return `${cs.filter((c) => c.ready).length}/${p.spec.containers.length}`;
}
function restarts(p) { return (p.status?.containerStatuses || []).reduce((n, c) => n + (c.restartCount || 0), 0); }

// schedulerReason is why a pending pod is not scheduled, in the scheduler's words.
export function schedulerReason(p) {
  const c = cond(p, 'PodScheduled');
  if (c && c.status === 'False') return `${c.reason || 'Unschedulable'}: ${c.message || ''}`.trim();
  return '';
}

// ---- page scaffolding ------------------------------------------------------------

// livePage mounts a page whose <div class="live"> re-renders when any of
// kinds changes (at most once per frame); morph keeps the nodes that did not
// change, so focus and a half-done click survive.
function livePage(main, title, kinds, render, head = '') {
  main.innerHTML = `<h1>${esc(title)}</h1>${head}<div class="panel" id="panel"></div><div class="live" id="live"></div>`;
  const live = main.querySelector('#live');
  const cols = {};
  let queued = false;
  const draw = () => {
    queued = false;
    const next = document.createElement('template');
    shownReasons.clear();
    next.innerHTML = render(cols);
    morph(live, next.content);
  };
  const redraw = () => { if (!queued) { queued = true; requestAnimationFrame(draw); } };
  const offs = kinds.map((k) => {
    const [c, off] = watch(typeof k === 'string' ? K[k] : k, redraw);
    cols[typeof k === 'string' ? k : k.resource] = c;
    return off;
  });
  reviewListeners.add(redraw);
  redraw();
  return { redraw, cleanup: () => { offs.forEach((f) => f()); reviewListeners.delete(redraw); } };
}

function ready(c) { return c && c.loaded; }
function loading(c) { return ready(c) ? '' : '<p class="muted">Loading…</p>'; }

// ---- overview ------------------------------------------------------------------

export function overview(main) {
  return livePage(main, 'Overview', ['nodes', 'pods', 'events'], ({ nodes, pods, events }) => {
    const alloc = new Map();
    const phases = {};
    for (const p of pods.items.values()) {
      const ph = p.status?.phase || 'Unknown';
      phases[ph] = (phases[ph] || 0) + 1;
      if (!p.spec.nodeName || ph === 'Succeeded' || ph === 'Failed') continue;
      const a = alloc.get(p.spec.nodeName) || { cpu: 0, mem: 0, pods: 0 };
      for (const c of p.spec.containers) {
        a.cpu += quantity(c.resources?.requests?.cpu);
        a.mem += quantity(c.resources?.requests?.memory);
      }
      a.pods++;
      alloc.set(p.spec.nodeName, a);
    }
    const nodeRows = sorted(nodes).map((n) => {
      const r = cond(n, 'Ready');
      const a = alloc.get(n.metadata.name) || { cpu: 0, mem: 0, pods: 0 };
      const cap = n.status?.allocatable || n.status?.capacity || {};
      const name = n.metadata.name;
      const cordon = n.spec.unschedulable
        ? actionButton('uncordon', 'Uncordon', K.nodes, '', name, 'patch')
        : actionButton('cordon', 'Cordon', K.nodes, '', name, 'patch');
      return `<tr><th scope="row">${esc(name)}</th><td class="${r?.status === 'True' ? 'ok' : 'bad'}">${r?.status === 'True' ? 'Ready' : 'NotReady'}${n.spec.unschedulable ? ', SchedulingDisabled' : ''}</td>` +
        `<td>${cores(a.cpu)} / ${cores(quantity(cap.cpu))}</td><td>${mem(a.mem)} / ${mem(quantity(cap.memory))}</td><td>${a.pods} / ${esc(cap.pods || '')}</td>` +
        `<td>${esc(n.status?.nodeInfo?.kubeletVersion || '')}</td><td>${age(n.metadata.creationTimestamp)}</td>` +
        `<td class="actions">${cordon}${actionButton('drain', 'Drain', K.nodes, '', name, 'patch')}</td></tr>`;
    });
    const phaseList = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']
      .map((ph) => `<li class="phase-${ph.toLowerCase()}"><span class="n">${phases[ph] || 0}</span> ${ph}</li>`).join('');
    const warnings = [...events.items.values()].filter((e) => e.type === 'Warning')
      .sort((a, b) => evTime(b).localeCompare(evTime(a))).slice(0, 10)
      .map((e) => `<tr><td>${age(evTime(e))}</td><td>${esc(e.reason)}</td><td>${esc(objRef(e))}</td><td>${esc(e.message)}</td></tr>`);
    return section('Nodes', nodes, loading(nodes) + table('Nodes', ['Name', 'Status', 'CPU requested / allocatable', 'Memory requested / allocatable', 'Pods', 'Version', 'Age', 'Actions'], nodeRows, 'No nodes')) +
      section('Pods by phase', pods, `<ul class="phases" aria-label="Pods by phase">${phaseList}</ul>`) +
      section('Recent warnings', events, table('Recent warning events', ['Last seen', 'Reason', 'Object', 'Message'], warnings, 'No warnings'));
  });
}

function evTime(e) { return e.lastTimestamp || e.eventTime || e.series?.lastObservedTime || e.firstTimestamp || e.metadata.creationTimestamp || ''; }
function objRef(e) { const o = e.involvedObject || e.regarding || {}; return `${o.kind || ''}/${o.namespace ? o.namespace + '/' : ''}${o.name || ''}`; }

// ---- workloads -----------------------------------------------------------------

function rollout(d) {
  const s = d.status || {};
  const want = d.spec.replicas ?? 1;
  const p = cond(d, 'Progressing');
  if (p && p.reason === 'ProgressDeadlineExceeded') return 'Stalled';
  if ((s.observedGeneration ?? 0) < d.metadata.generation) return 'Rolling out';
  if ((s.updatedReplicas || 0) < want || (s.replicas || 0) > (s.updatedReplicas || 0) || (s.availableReplicas || 0) < want) return 'Rolling out';
  return 'Complete';
}

function workloadActions(kind, o) {
  const ns = o.metadata.namespace, name = o.metadata.name;
  let b = '';
  if (kind.scale) b += actionButton('scale', 'Scale', kind, ns, name, 'patch', 'scale', `data-replicas="${o.spec.replicas ?? 1}"`);
  if (kind.restart) b += actionButton('restart', 'Restart', kind, ns, name, 'patch');
  b += actionButton('edit', 'Edit', kind, ns, name, 'update');
  b += actionButton('delete', 'Delete', kind, ns, name, 'delete');
  return `<td class="actions">${b}</td>`;
}

function nameCell(o) { return `<th scope="row">${esc(o.metadata.name)}</th><td>${esc(o.metadata.namespace)}</td>`; }

export function workloads(main) {
  return livePage(main, 'Workloads', ['deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs', 'pods'], (c) => {
    const dep = sorted(c.deployments).map((d) => `<tr data-name="${esc(d.metadata.name)}">${nameCell(d)}<td>${d.status?.readyReplicas || 0}/${d.spec.replicas ?? 1}</td><td>${d.status?.updatedReplicas || 0}</td><td>${d.status?.availableReplicas || 0}</td><td>${rollout(d)}</td><td>${age(d.metadata.creationTimestamp)}</td>${workloadActions(K.deployments, d)}</tr>`);
    const sts = sorted(c.statefulsets).map((s) => `<tr>${nameCell(s)}<td>${s.status?.readyReplicas || 0}/${s.spec.replicas ?? 1}</td><td>${s.status?.updatedReplicas || 0}</td><td>${age(s.metadata.creationTimestamp)}</td>${workloadActions(K.statefulsets, s)}</tr>`);
    const ds = sorted(c.daemonsets).map((s) => `<tr>${nameCell(s)}<td>${s.status?.desiredNumberScheduled || 0}</td><td>${s.status?.currentNumberScheduled || 0}</td><td>${s.status?.numberReady || 0}</td><td>${s.status?.updatedNumberScheduled || 0}</td><td>${age(s.metadata.creationTimestamp)}</td>${workloadActions(K.daemonsets, s)}</tr>`);
    const jobs = sorted(c.jobs).map((j) => {
      const done = cond(j, 'Complete')?.status === 'True' ? 'Complete' : cond(j, 'Failed')?.status === 'True' ? 'Failed' : (j.spec.suspend ? 'Suspended' : 'Running');
      return `<tr>${nameCell(j)}<td>${done}</td><td>${j.status?.succeeded || 0}/${j.spec.completions ?? 1}</td><td>${j.status?.active || 0}</td><td>${j.status?.failed || 0}</td><td>${age(j.metadata.creationTimestamp)}</td>${workloadActions(K.jobs, j)}</tr>`;
    });
    const cj = sorted(c.cronjobs).map((j) => `<tr>${nameCell(j)}<td><code>${esc(j.spec.schedule)}</code></td><td>${j.spec.suspend ? 'Yes' : 'No'}</td><td>${(j.status?.active || []).length}</td><td>${age(j.status?.lastScheduleTime)}</td><td>${age(j.metadata.creationTimestamp)}</td>${workloadActions(K.cronjobs, j)}</tr>`);
    return section('Deployments', c.deployments, loading(c.deployments) + table('Deployments', ['Name', 'Namespace', 'Ready', 'Up-to-date', 'Available', 'Rollout', 'Age', 'Actions'], dep, 'No Deployments')) +
      section('StatefulSets', c.statefulsets, table('StatefulSets', ['Name', 'Namespace', 'Ready', 'Updated', 'Age', 'Actions'], sts, 'No StatefulSets')) +
      section('DaemonSets', c.daemonsets, table('DaemonSets', ['Name', 'Namespace', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Age', 'Actions'], ds, 'No DaemonSets')) +
      section('Jobs', c.jobs, table('Jobs', ['Name', 'Namespace', 'Status', 'Completions', 'Active', 'Failed', 'Age', 'Actions'], jobs, 'No Jobs')) +
      section('CronJobs', c.cronjobs, table('CronJobs', ['Name', 'Namespace', 'Schedule', 'Suspended', 'Active', 'Last schedule', 'Age', 'Actions'], cj, 'No CronJobs')) +
      podsSection(c.pods);
  });
}

// ---- pods ----------------------------------------------------------------------

function podsSection(pods) {
  const rows = sorted(pods).map((p) => {
    const ns = p.metadata.namespace, name = p.metadata.name;
    const st = podStatus(p);
    const why = st === 'Pending' ? schedulerReason(p) : '';
    return `<tr data-pod="${esc(name)}" data-key="${esc(ns + '/' + name)}"><th scope="row"><a href="#/pod/${encodeURIComponent(ns)}/${encodeURIComponent(name)}">${esc(name)}</a></th><td>${esc(ns)}</td>` +
      `<td class="st-${esc(st.toLowerCase())}">${esc(st)}${why ? `<div class="why">${esc(why)}</div>` : ''}</td><td>${podReady(p)}</td><td>${restarts(p)}</td>` +
      `<td>${esc(p.spec.nodeName || '')}</td><td>${esc(p.status?.podIP || '')}</td><td>${age(p.metadata.creationTimestamp)}</td>` +
      '</tr>';
  });
  return section('Pods', pods, loading(pods) + table('Pods', ['Name', 'Namespace', 'Status', 'Ready', 'Restarts', 'Node', 'IP', 'Age'], rows, 'No pods'));
}

export function pods(main) {
  return livePage(main, 'Pods', ['pods'], (c) => podsSection(c.pods));
}

export function pod(main, [ns, name]) {
  const head = `<section aria-labelledby="logs-h" class="logs"><h2 id="logs-h">Logs</h2>
    <form id="logform" class="row">
      <label>Container <select id="log-container"></select></label>
      <label><input type="checkbox" id="log-follow" checked> Follow</label>
      <label><input type="checkbox" id="log-previous"> Previous</label>
      <button type="submit">Show logs</button>
    </form>
    <pre id="log" tabindex="0" aria-label="Log output" aria-live="off"></pre><p id="log-error" role="alert" class="error"></p></section>`;
  let logCtrl = null;
  let containers = '';
  const page = livePage(main, `Pod ${ns}/${name}`, ['pods', 'events'], ({ pods: pc, events }) => {
    const p = pc.items.get(ns + '/' + name);
    if (!p) return pc.error ? listProblem(pc) : (ready(pc) ? '<p role="alert">This pod does not exist (any more).</p>' : '<p class="muted">Loading…</p>');
    const names = [...(p.spec.initContainers || []), ...p.spec.containers].map((c) => c.name);
    if (names.join() !== containers) {
      containers = names.join();
      const sel = main.querySelector('#log-container');
      sel.innerHTML = names.map((n) => `<option>${esc(n)}</option>`).join('');
      if (!logCtrl) startLogs();
    }
    const why = schedulerReason(p);
    const conds = (p.status?.conditions || []).map((c) => `<tr><th scope="row">${esc(c.type)}</th><td>${esc(c.status)}</td><td>${esc(c.reason || '')}</td><td>${esc(c.message || '')}</td></tr>`);
    const cs = (p.status?.containerStatuses || []).map((c) => {
      const state = Object.keys(c.state || {})[0] || '';
      const detail = c.state?.[state]?.reason || '';
      return `<tr><th scope="row">${esc(c.name)}</th><td>${esc(state)}${detail ? ' (' + esc(detail) + ')' : ''}</td><td>${c.ready ? 'Yes' : 'No'}</td><td>${c.restartCount}</td><td>${esc(c.image)}</td></tr>`;
    });
    const evs = [...events.items.values()].filter((e) => (e.involvedObject || e.regarding || {}).uid === p.metadata.uid)
      .sort((a, b) => evTime(b).localeCompare(evTime(a)))
      .map((e) => `<tr><td>${age(evTime(e))}</td><td>${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${esc(e.message)}</td></tr>`);
    return `<dl class="facts"><dt>Status</dt><dd id="pod-status">${esc(podStatus(p))}</dd><dt>Node</dt><dd>${esc(p.spec.nodeName || '—')}</dd>` +
      `<dt>IP</dt><dd>${esc(p.status?.podIP || '—')}</dd><dt>Restarts</dt><dd>${restarts(p)}</dd><dt>Age</dt><dd>${age(p.metadata.creationTimestamp)}</dd></dl>` +
      (why ? `<p class="pending" role="status" id="sched-reason"><strong>Not scheduled.</strong> ${esc(why)}</p>` : '') +
      `<p class="actions">${actionButton('edit', 'Edit', K.pods, ns, name, 'update')}${actionButton('delete', 'Delete', K.pods, ns, name, 'delete')}</p>` +
      section('Containers', null, table('Containers', ['Name', 'State', 'Ready', 'Restarts', 'Image'], cs, 'No container has started')) +
      section('Conditions', null, table('Conditions', ['Type', 'Status', 'Reason', 'Message'], conds)) +
      section('Events', null, table('Pod events', ['Age', 'Type', 'Reason', 'Message'], evs, 'No events'));
  }, '');
  main.insertAdjacentHTML('beforeend', head);
  const out = main.querySelector('#log');
  const err = main.querySelector('#log-error');
  function startLogs() {
    if (logCtrl) logCtrl.abort();
    logCtrl = new AbortController();
    const ctrl = logCtrl;
    out.textContent = '';
    err.textContent = '';
    const q = { container: main.querySelector('#log-container').value, tailLines: '1000' };
    if (main.querySelector('#log-follow').checked) q.follow = 'true';
    if (main.querySelector('#log-previous').checked) q.previous = 'true';
    const atBottom = () => out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    stream(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/log`, q, (chunk) => {
      const stick = atBottom();
      out.append(chunk);
      if (out.textContent.length > 2e6) out.textContent = out.textContent.slice(-1e6);
      if (stick) out.scrollTop = out.scrollHeight;
    }, { signal: ctrl.signal, accept: 'text/plain, application/json' }).catch((e) => {
      if (!ctrl.signal.aborted) err.textContent = e.message;
    });
  }
  main.querySelector('#logform').addEventListener('submit', (e) => { e.preventDefault(); startLogs(); });
  return { cleanup: () => { page.cleanup(); if (logCtrl) logCtrl.abort(); } };
}

// ---- services --------------------------------------------------------------------

export function services(main) {
  return livePage(main, 'Services', ['services', 'endpointslices'], ({ services: sc, endpointslices: ep }) => {
    const bySvc = new Map();
    for (const s of ep.items.values()) {
      const svc = s.metadata.labels?.['kubernetes.io/service-name'];
      if (!svc) continue;
      const k = s.metadata.namespace + '/' + svc;
      const list = bySvc.get(k) || [];
      const ports = (s.ports || []).map((p) => p.port);
      for (const e of s.endpoints || []) {
        const rdy = e.conditions?.ready !== false;
        for (const a of e.addresses || []) list.push({ addr: ports.length ? ports.map((p) => `${a}:${p}`).join(', ') : a, ready: rdy });
      }
      bySvc.set(k, list);
    }
    const rows = sorted(sc).map((s) => {
      const eps = bySvc.get(s.metadata.namespace + '/' + s.metadata.name) || [];
      const epText = eps.length ? eps.map((e) => `<span class="${e.ready ? 'ok' : 'bad'}">${esc(e.addr)}${e.ready ? '' : ' (not ready)'}</span>`).join('<br>') : '<span class="muted">none</span>';
      const ports = (s.spec.ports || []).map((p) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol || 'TCP'}`).join(', ');
      return `<tr>${nameCell(s)}<td>${esc(s.spec.type || 'ClusterIP')}</td><td>${esc(s.spec.clusterIP || '')}</td><td>${esc(ports)}</td><td>${epText}</td><td>${age(s.metadata.creationTimestamp)}</td>` +
        `<td class="actions">${actionButton('edit', 'Edit', K.services, s.metadata.namespace, s.metadata.name, 'update')}${actionButton('delete', 'Delete', K.services, s.metadata.namespace, s.metadata.name, 'delete')}</td></tr>`;
    });
    return section('Services', sc, loading(sc) + (ep.error ? listProblem(ep) : '') + table('Services', ['Name', 'Namespace', 'Type', 'Cluster IP', 'Ports', 'Endpoints', 'Age', 'Actions'], rows, 'No Services'));
  });
}

// ---- config ----------------------------------------------------------------------

export function config(main) {
  return livePage(main, 'ConfigMaps and Secrets', ['configmaps', 'secrets'], ({ configmaps: cm, secrets }) => {
    const cms = sorted(cm).map((c) => `<tr data-name="${esc(c.metadata.name)}">${nameCell(c)}<td>${Object.keys(c.data || {}).length + Object.keys(c.binaryData || {}).length}</td><td>${age(c.metadata.creationTimestamp)}</td>` +
      `<td class="actions">${actionButton('edit', 'Edit', K.configmaps, c.metadata.namespace, c.metadata.name, 'update')}${actionButton('delete', 'Delete', K.configmaps, c.metadata.namespace, c.metadata.name, 'delete')}</td></tr>`);
    const sec = secrets.columns ? sorted(secrets).map((r) => {
      const m = r.object.metadata;
      const cells = r.cells.slice(1).map((v) => `<td>${esc(v)}</td>`).join('');
      return `<tr><th scope="row">${esc(m.name)}</th><td>${esc(m.namespace)}</td>${cells}<td class="actions">${actionButton('edit', 'Edit', K.secrets, m.namespace, m.name, 'update')}${actionButton('delete', 'Delete', K.secrets, m.namespace, m.name, 'delete')}</td></tr>`;
    }) : [];
    const secHead = ['Name', 'Namespace', ...(secrets.columns || []).slice(1).map((c) => c.name), 'Actions'];
    return section('ConfigMaps', cm, loading(cm) + table('ConfigMaps', ['Name', 'Namespace', 'Keys', 'Age', 'Actions'], cms, 'No ConfigMaps')) +
      section('Secrets', secrets, loading(secrets) + table('Secrets', secHead, sec, 'No Secrets'));
  });
}

// ---- events ----------------------------------------------------------------------

export function eventsPage(main) {
  const head = `<form class="row filters" role="search" aria-label="Filter events">
    <label>Filter <input type="search" id="ev-filter" placeholder="reason, object or message"></label>
    <label>Type <select id="ev-type"><option value="">All</option><option>Warning</option><option>Normal</option></select></label></form>`;
  const page = livePage(main, 'Events', ['events'], ({ events }) => {
    const text = (main.querySelector('#ev-filter')?.value || '').toLowerCase();
    const type = main.querySelector('#ev-type')?.value || '';
    const rows = [...events.items.values()]
      .filter((e) => (!type || e.type === type) && (!text || `${e.reason} ${objRef(e)} ${e.message}`.toLowerCase().includes(text)))
      .sort((a, b) => evTime(b).localeCompare(evTime(a))).slice(0, 500)
      .map((e) => `<tr class="${e.type === 'Warning' ? 'warn' : ''}"><td>${age(evTime(e))}</td><td>${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${esc(objRef(e))}</td><td>${esc(e.message)}</td><td>${e.count || 1}</td></tr>`);
    return section('Events', events, loading(events) + table('Events', ['Last seen', 'Type', 'Reason', 'Object', 'Message', 'Count'], rows, 'No events match'));
  }, head);
  main.querySelector('.filters').addEventListener('input', page.redraw);
  main.querySelector('.filters').addEventListener('submit', (e) => e.preventDefault());
  return page;
}

// ---- custom resources ---------------------------------------------------------------

function servedVersion(crd) {
  const vs = crd.spec.versions || [];
  return (vs.find((v) => v.storage && v.served) || vs.find((v) => v.served) || vs[0] || {}).name;
}

export function crds(main) {
  return livePage(main, 'Custom resources', ['crds'], ({ crds: c }) => {
    const rows = sorted(c).map((d) => {
      const est = cond(d, 'Established')?.status === 'True';
      return `<tr><th scope="row"><a href="#/cr/${encodeURIComponent(d.metadata.name)}">${esc(d.spec.names.kind)}</a></th><td>${esc(d.spec.group)}</td><td>${esc((d.spec.versions || []).filter((v) => v.served).map((v) => v.name).join(', '))}</td><td>${esc(d.spec.scope)}</td><td class="${est ? 'ok' : 'bad'}">${est ? 'Established' : 'Not established'}</td><td>${age(d.metadata.creationTimestamp)}</td>` +
        `<td class="actions">${actionButton('edit', 'Edit', K.crds, '', d.metadata.name, 'update')}</td></tr>`;
    });
    return section('CustomResourceDefinitions', c, loading(c) + table('CustomResourceDefinitions', ['Kind', 'Group', 'Versions', 'Scope', 'State', 'Age', 'Actions'], rows, 'No CustomResourceDefinitions'));
  });
}

// cr shows one CRD's objects in a table of its printer columns: the server's
// Table rendering (Accept ...;as=Table), listed and watched.
export function cr(main, [crdName]) {
  main.innerHTML = '<p class="muted">Loading…</p>';
  let inner = null;
  let stopped = false;
  request('GET', objPath(K.crds, '', crdName)).then((crd) => {
    if (stopped) return;
    const v = servedVersion(crd);
    const kind = {
      base: `/apis/${crd.spec.group}/${v}`, group: crd.spec.group, resource: crd.spec.names.plural,
      namespaced: crd.spec.scope === 'Namespaced', table: true, kind: crd.spec.names.kind,
    };
    inner = livePage(main, `${crd.spec.names.kind} (${crd.spec.group}/${v})`, [kind], (cols) => {
      const c = cols[kind.resource];
      const defs = (c.columns || []).filter((d) => !d.priority);
      const idx = (c.columns || []).map((d, i) => (!d.priority ? i : -1)).filter((i) => i >= 0);
      const head = [...(kind.namespaced ? ['Namespace'] : []), ...defs.map((d) => d.name), 'Actions'];
      const rows = sorted(c).map((r) => {
        const m = r.object.metadata;
        const cells = idx.map((i, j) => (j === 0 ? `<th scope="row">${esc(r.cells[i])}</th>` : `<td>${esc(r.cells[i])}</td>`)).join('');
        return `<tr>${kind.namespaced ? `<td>${esc(m.namespace)}</td>` : ''}${cells}<td class="actions">${actionButton('edit', 'Edit', kind, m.namespace, m.name, 'update')}${actionButton('delete', 'Delete', kind, m.namespace, m.name, 'delete')}</td></tr>`;
      });
      return section(crd.spec.names.kind, c, loading(c) + table(crd.spec.names.kind, head, rows, `No ${crd.spec.names.plural}`));
    });
  }, (e) => { main.innerHTML = `<h1>${esc(crdName)}</h1><p class="error" role="alert">${esc(e.message)}</p>`; });
  return { cleanup: () => { stopped = true; inner?.cleanup(); } };
}

// ---- controllers and operators ------------------------------------------------------

// controllers shows the loaded operators (kube-system/converge-operators) and
// every controller's reconcile rate and errors, streamed by the dashboard
// from the metrics the framework keeps (one sample every 2 s on one response).
export function controllers(main) {
  main.innerHTML = `<h1>Controllers</h1><section aria-labelledby="ops-h"><h2 id="ops-h">Operators</h2><div id="ops"><p class="muted">Loading…</p></div></section>
    <section aria-labelledby="ctl-h"><h2 id="ctl-h">Controllers</h2><div id="ctl"><p class="muted">Loading…</p></div></section>`;
  const ops = main.querySelector('#ops');
  const ctl = main.querySelector('#ctl');
  const ctrl = new AbortController();
  request('GET', '/api/v1/namespaces/kube-system/configmaps/converge-operators', { signal: ctrl.signal }).then((cm) => {
    const rows = Object.values(cm.data || {}).map((v) => JSON.parse(v)).map((r) =>
      `<tr><th scope="row">${esc(r.name || '?')}</th><td class="${r.state === 'Running' ? 'ok' : 'bad'}">${esc(r.state)}</td><td>${esc(r.path)}</td><td>${esc(r.error || '')}</td><td>${age(r.time)}</td></tr>`);
    ops.innerHTML = table('Operators', ['Name', 'State', 'Plugin', 'Error', 'Since'], rows, 'No operators loaded');
  }, (e) => {
    ops.innerHTML = e.code === 404 ? '<p class="muted">No operators loaded.</p>'
      : e.code === 403 ? `<p class="forbidden" role="alert"><strong>You may not get the operators' status.</strong> <span class="k8s">${esc(e.message)}</span></p>` : errorHTML(e);
  });
  // The stream ends or breaks when the server restarts or the network drops
  // (a loaded machine, a proxy's idle timeout): the page reconnects with
  // back-off, keeping the last table, as the lists' watches do. A refusal
  // (403, 404) is final.
  const show = (last) => {
    const rows = last.controllers.map((c) => `<tr data-key="${esc(c.name)}" data-name="${esc(c.name)}"><th scope="row">${esc(c.name)}</th><td>${c.reconciles}</td><td>${c.ratePerSecond.toFixed(2)}</td>` +
      `<td class="${c.errors ? 'bad' : ''}">${c.errors}</td><td>${c.errorsPerSecond.toFixed(2)}</td><td>${c.panics}</td><td>${c.activeWorkers}</td></tr>`);
    const next = document.createElement('template');
    next.innerHTML = table('Controllers', ['Controller', 'Reconciles', 'Per second', 'Errors', 'Errors per second', 'Panics', 'Busy workers'], rows, 'No controllers') +
      '<p id="ctl-state" class="muted" role="status"></p>';
    morph(ctl, next.content);
  };
  const follow = async () => {
    let delay = 500;
    while (!ctrl.signal.aborted) {
      let shown = false;
      try {
        let buf = '';
        await stream('/ui/controllers', null, (chunk) => {
          buf += chunk;
          let i;
          let last = null;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (line) last = JSON.parse(line);
          }
          if (!last) return;
          show(last);
          shown = true;
          delay = 500;
        }, { signal: ctrl.signal });
      } catch (e) {
        if (ctrl.signal.aborted) return;
        if (e.code === 403) {
          ctl.innerHTML = `<p class="forbidden" role="alert"><strong>You may not see the controllers' metrics.</strong> <span class="k8s">${esc(e.message)}</span></p>`;
          return;
        }
        if (e.code === 404) {
          ctl.innerHTML = `<p class="error" role="alert">${esc(e.message)}</p>`;
          return;
        }
        const state = ctl.querySelector('#ctl-state');
        if (state) state.textContent = `Reconnecting (${e.message})…`;
        else if (!shown) ctl.innerHTML = `<p class="error" role="alert">${esc(e.message)}; reconnecting…</p>`;
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10000);
    }
  };
  follow();
  return { cleanup: () => ctrl.abort() };
}

// ---- edit ----------------------------------------------------------------------

// edit shows an object as YAML; Validate sends it with dryRun=All and shows
// the server's verdict inline; Save does the same dry run first, then writes.
export function edit(main, parts) {
  const path = '/' + parts.map(decodeURIComponent).map(encodeURIComponent).join('/');
  main.innerHTML = `<h1>Edit <code>${esc(path)}</code></h1>
    <form id="editform" class="edit">
      <label for="yaml">YAML</label>
      <textarea id="yaml" spellcheck="false" autocapitalize="off" rows="24"></textarea>
      <div class="row"><button type="button" id="validate">Validate (dry run)</button><button type="submit" id="save">Save</button>
      <button type="button" id="back">Back</button></div>
      <div id="verdict" role="alert" aria-live="assertive"></div>
    </form>`;
  const ta = main.querySelector('#yaml');
  const verdict = main.querySelector('#verdict');
  request('GET', path).then((o) => {
    ta.value = toYAML(forEditing(o));
    ta.focus();
  }, (e) => { verdict.innerHTML = errorHTML(e); });
  const put = (dry) => request('PUT', path, { body: ta.value, contentType: 'application/yaml', query: dry ? { dryRun: 'All', fieldManager: 'converge-dashboard' } : { fieldManager: 'converge-dashboard' } });
  const validate = async () => {
    verdict.innerHTML = '<p class="muted">Checking with the server (dry run)…</p>';
    try {
      await put(true);
      verdict.innerHTML = '<p class="ok" id="dryrun-ok">Dry run passed: the server accepts this object (nothing saved yet).</p>';
      return true;
    } catch (e) {
      verdict.innerHTML = errorHTML(e, 'Dry run refused');
      return false;
    }
  };
  main.querySelector('#validate').addEventListener('click', validate);
  main.querySelector('#back').addEventListener('click', () => history.back());
  main.querySelector('#editform').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!(await validate())) return;
    try {
      const o = await put(false);
      verdict.innerHTML = `<p class="ok" id="saved">Saved (resourceVersion ${esc(o.metadata?.resourceVersion)}).</p>`;
      ta.value = toYAML(forEditing(o));
    } catch (e) {
      verdict.innerHTML = errorHTML(e, 'Save refused');
    }
  });
  return { cleanup: () => {} };
}

// forEditing orders an object as kubectl shows it (apiVersion, kind,
// metadata first) without its managedFields.
function forEditing(o) {
  const { apiVersion, kind, metadata, ...rest } = o;
  const m = { ...metadata };
  delete m.managedFields;
  return { apiVersion, kind, metadata: m, ...rest };
}

// errorHTML shows an API error as Kubernetes words it, with its causes.
export function errorHTML(e, what = 'Refused') {
  if (!(e instanceof APIError)) return `<p class="error">${esc(e.message)}</p>`;
  const causes = (e.status.details?.causes || []).map((c) => `<li><code>${esc(c.field || '')}</code> ${esc(c.message)}</li>`).join('');
  return `<div class="error k8s-error"><p><strong>${esc(what)} (${e.code} ${esc(e.reason || '')}):</strong> <span class="k8s">${esc(e.message)}</span></p>${causes ? `<ul>${causes}</ul>` : ''}</div>`;
}

// ---- actions ------------------------------------------------------------------------

// onAction runs the action of a clicked button; panel is where forms and
// confirmations appear, say shows results.
export async function onAction(btn, panel, say) {
  const { act, ns, name } = btn.dataset;
  const kind = kindOf(btn.dataset.kind);
  const path = objPath(kind, ns, name);
  const label = `${kind.kind} ${ns ? ns + '/' : ''}${name}`;
  const run = async (what, fn) => {
    try {
      await fn();
      say(`${what}: ${label}`);
      panel.innerHTML = '';
      return true;
    } catch (e) {
      panel.innerHTML = errorHTML(e, `${what} refused`);
      return false;
    }
  };
  switch (act) {
    case 'edit':
      location.hash = '#/edit' + path;
      return;
    case 'scale': {
      panel.innerHTML = `<form class="row" id="scaleform" aria-label="Scale ${esc(label)}"><label>Replicas of ${esc(label)} <input type="number" min="0" id="replicas" value="${esc(btn.dataset.replicas)}"></label>
        <button type="submit">Apply</button><button type="button" data-cancel>Cancel</button></form>`;
      const input = panel.querySelector('#replicas');
      input.focus();
      input.select();
      panel.querySelector('#scaleform').addEventListener('submit', (e) => {
        e.preventDefault();
        run('Scaled', () => request('PATCH', path + '/scale', { body: { spec: { replicas: Number(input.value) } }, contentType: 'application/merge-patch+json' }));
      });
      return;
    }
    case 'restart':
      await run('Restarted', () => request('PATCH', path, {
        body: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } },
        contentType: 'application/strategic-merge-patch+json', query: { fieldManager: 'converge-dashboard' },
      }));
      return;
    case 'delete': {
      panel.innerHTML = `<div class="row confirm" role="group" aria-label="Confirm deletion"><span>Delete ${esc(label)}?</span>
        <button type="button" id="confirm-delete" class="danger">Delete</button><button type="button" data-cancel>Cancel</button></div>`;
      panel.querySelector('#confirm-delete').focus();
      panel.querySelector('#confirm-delete').addEventListener('click', () => run('Deleted', () => request('DELETE', path)));
      return;
    }
    case 'cordon':
    case 'uncordon':
      await run(act === 'cordon' ? 'Cordoned' : 'Uncordoned', () => request('PATCH', path, { body: { spec: { unschedulable: act === 'cordon' } }, contentType: 'application/merge-patch+json' }));
      return;
    case 'drain':
      await run('Drained', () => drain(name));
      return;
    default:
  }
}

// drain cordons a node and evicts its pods (DaemonSet pods and mirror pods
// stay, as kubectl drain leaves them).
async function drain(node) {
  await request('PATCH', objPath(K.nodes, '', node), { body: { spec: { unschedulable: true } }, contentType: 'application/merge-patch+json' });
  const list = await request('GET', '/api/v1/pods', { query: { fieldSelector: `spec.nodeName=${node}` } });
  const errs = [];
  for (const p of list.items) {
    const owner = (p.metadata.ownerReferences || []).find((o) => o.controller);
    if (owner?.kind === 'DaemonSet' || p.metadata.annotations?.['kubernetes.io/config.mirror']) continue;
    if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    const path = objPath(K.pods, p.metadata.namespace, p.metadata.name);
    try {
      await request('POST', path + '/eviction', { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: p.metadata.namespace } } });
    } catch (e) {
      errs.push(e);
    }
  }
  if (errs.length) throw errs[0];
}

