// One stack: header with its state and actions, and tabs for the topology, the event
// timeline, resources, events, outputs, parameters, template, environment, snapshots,
// change sets and history. Everything shown follows the stack's event stream while the
// page is open.
import { Api } from './api.js';
import { h, clear, badge, time, pretty, toast, statusClass } from './dom.js';
import { Topology } from './graph.js';
import { Timeline } from './timeline.js';
import { followEvents } from './stream.js';
import { changeSetsPane } from './changesets.js';
import { historyPane } from './history.js';
import { Drift } from './drift.js';

const TABS = ['topology', 'timeline', 'resources', 'events', 'outputs', 'parameters',
              'template', 'environment', 'snapshots', 'changesets', 'history'];
const LABELS = {changesets: 'Change sets'};
const HOOK = /paused until Hook ([\w-]+) is cleared/;
const MAX_EVENT_ROWS = 500;

/** The actions a stack in this state accepts: a button the API would refuse (a second
 * action while one runs, resuming a stack that is not suspended, updating a suspended
 * one, cancelling anything but a running update) is not offered at all. Delete is
 * always offered until the stack is gone: it pre-empts a running action. */
export function allowedActions(status) {
  const s = String(status || '');
  const [action] = s.split('_');
  const running = s.endsWith('_IN_PROGRESS');
  const gone = s === 'DELETE_COMPLETE';
  const idle = !running && !gone && action !== 'DELETE';
  return {
    update: idle && action !== 'SUSPEND',
    suspend: idle && s !== 'SUSPEND_COMPLETE',
    resume: idle && (action === 'SUSPEND' || s === 'RESUME_FAILED'),
    check: idle,
    drift: idle,
    snapshot: idle,
    cancel_update: s === 'UPDATE_IN_PROGRESS',
    delete: !gone,
  };
}

/** Why a resource has not started in the stack's running action: the resources it waits
 * for that are not done yet (its dependencies; on delete, the resources that depend on
 * it, which go first). Empty when the stack is not running or the resource has started. */
export function waitingFor(resource, list, stackStatus) {
  const s = String(stackStatus || '');
  if (!s.endsWith('_IN_PROGRESS')) return [];
  const action = s.slice(0, -'_IN_PROGRESS'.length);
  const own = String(resource.resource_status || '');
  if (own.endsWith('_IN_PROGRESS') || own.endsWith('_FAILED') || own === `${action}_COMPLETE`) {
    return [];
  }
  const name = resource.resource_name;
  const deps = action === 'DELETE'
    ? list.filter(x => (resource.required_by || []).includes(x.resource_name))
    : list.filter(x => (x.required_by || []).includes(name));
  const unfinished = x => {
    const st = String(x.resource_status || '');
    if (action === 'DELETE') return st !== 'DELETE_COMPLETE';
    return st === 'INIT_COMPLETE' || st.endsWith('_IN_PROGRESS') || st.endsWith('_FAILED');
  };
  return deps.filter(unfinished);
}

export function stackPage(view, api, name, id, tab, {go, onLeave}) {
  const path = `/stacks/${encodeURIComponent(name)}/${id}`;
  let stack = null;
  const head = h('div', {class: 'stack-head'});
  const tabs = h('nav', {class: 'tabs'});
  const panes = {};
  for (const t of TABS) panes[t] = h('section', {class: 'pane', dataset: {tab: t}, hidden: true});
  const side = h('aside', {class: 'side', hidden: true});
  const live = h('span', {class: 'live muted', id: 'live'}, 'connecting…');
  const legend = h('div', {class: 'legend', id: 'legend'});

  // -- topology -----------------------------------------------------------------------
  const canvas = h('canvas', {class: 'topology', id: 'topology',
                              'aria-label': 'Topology of the stack\'s resources'});
  const topo = new Topology(canvas, {onSelect: n => showResource(n), onExpand: n => expand(n)});
  const drift = new Drift(api, path, () => {
    topo.setDrift(drift.driftedKeys());
    renderResources();
    if (shownNode && !side.hidden) showResource(shownNode);
  });
  panes.topology.append(h('div', {class: 'row'},
    h('button', {type: 'button', onclick: () => topo.fit()}, 'Fit'),
    h('span', {class: 'muted'},
      'Drag to pan, wheel to zoom, click a resource for details, double-click a ',
      'nested stack (▸) to open it in place. An arrow points from a resource to ',
      'the resources that depend on it.'), legend), canvas);

  // -- timeline -------------------------------------------------------------------------
  const timelineBox = h('div', {class: 'timeline', id: 'timeline'});
  panes.timeline.append(timelineBox);
  const timeline = new Timeline(timelineBox);

  // -- events ---------------------------------------------------------------------------
  const eventRows = h('tbody');
  panes.events.append(h('table', {class: 'list events'},
    h('thead', {}, h('tr', {}, ['Time', 'Stack', 'Resource', 'Status', 'Reason']
      .map(t => h('th', {}, t)))), eventRows));

  // the newest event of each resource: a resource list read while events stream in may
  // be older than them (or lack a hook's pause, which is an event, not a state)
  const lastEvents = new Map();
  function replayEvents() {
    for (const ev of lastEvents.values()) {
      topo.update(ev.stack_id, ev.resource_name, ev.resource_status, ev.resource_status_reason);
    }
  }

  function onEvent(ev) {
    lastEvents.set(`${ev.stack_id}/${ev.resource_name}`, ev);
    timeline.add(ev, name, id);
    pendingRows.push(ev);
    scheduleFrame();
    if (ev.physical_resource_id === id && ev.stack_id === id) {
      if (stack) stack.stack_status = ev.resource_status;
      renderHead();
      refreshStack();
      if (!String(ev.resource_status).endsWith('_IN_PROGRESS')) {
        // the action ended: the resource list is the truth (a replaced resource's old
        // copy sent the last event under the same name)
        lastEvents.clear();
        reloadResources();
      }
      return;
    }
    if (shownNode && !side.hidden && shownNode.stackId === ev.stack_id
        && (shownNode.name === ev.resource_name || shownWaits.has(ev.resource_name))) {
      clearTimeout(sideTimer);               // the open details follow the resource too
      sideTimer = setTimeout(() => showResource(shownNode), 150);
    }
    if (!topo.update(ev.stack_id, ev.resource_name, ev.resource_status,
                     ev.resource_status_reason)) {
      if (ev.stack_id === id) reloadResources();
    }
    scheduleFrame();
  }

  // Thousands of events can arrive at once (a replay, a big group): the DOM work they
  // cause is done once per animation frame, not once per event.
  let pendingRows = [], frameQueued = false;
  function scheduleFrame() {
    if (frameQueued) return;
    frameQueued = true;
    requestAnimationFrame(() => {
      frameQueued = false;
      const rows = pendingRows.slice(-MAX_EVENT_ROWS).reverse();
      pendingRows = [];
      eventRows.prepend(...rows.map(ev => h('tr', {}, h('td', {}, time(ev.event_time)),
        h('td', {}, ev.stack_name || name), h('td', {}, ev.resource_name),
        h('td', {}, badge(ev.resource_status)),
        h('td', {class: 'muted'}, ev.resource_status_reason || ''))));
      while (eventRows.children.length > MAX_EVENT_ROWS) eventRows.lastChild.remove();
      renderLegend();
    });
  }

  // -- loading ---------------------------------------------------------------------------
  let resourcesTimer = 0, stackTimer = 0, sideTimer = 0, shownNode = null;
  function reloadResources() {
    clearTimeout(resourcesTimer);
    resourcesTimer = setTimeout(loadResources, 150);
  }
  function refreshStack() {
    clearTimeout(stackTimer);
    stackTimer = setTimeout(loadStack, 150);
  }

  async function loadStack() {
    try {
      stack = (await api.get(path)).stack;
      renderHead();
      renderOutputs(); renderParameters();
    } catch (err) {
      if (err.status === 404) { clear(head, h('h1', {}, name), badge('DELETE_COMPLETE')); return; }
      toast(err.message, 'error');
    }
  }

  let resourceList = [];
  async function loadResources() {
    try {
      resourceList = (await api.get(`${path}/resources`)).resources || [];
    } catch (err) {
      if (err.status !== 404) toast(err.message, 'error');
      resourceList = [];
    }
    topo.setResources(id, resourceList);
    replayEvents();
    if (!loadResources.fitted && resourceList.length) { loadResources.fitted = true; topo.fit(); }
    renderLegend();
    renderResources();
    // re-open what was expanded
    for (const n of topo.nodes.values()) {
      if (n.expanded && n.parent === null && n.nested) expand(n);
    }
  }

  async function expand(node) {
    try {
      const nestedPath = Api.linkPath(node.nested);
      const nestedId = nestedPath.split('/').pop();
      const data = await api.get(`${nestedPath}/resources`);
      topo.setResources(nestedId, data.resources || [], node.key);
      replayEvents();
      renderLegend();
    } catch (err) {
      toast(`Cannot open ${node.name}: ${err.message}`, 'error');
    }
  }

  function renderLegend() {
    const counts = topo.counts();
    clear(legend, Object.entries(counts).sort().map(([s, n]) =>
      h('span', {class: `badge ${statusClass(s)}`, dataset: {status: s}}, `${s} ${n}`)));
  }

  // -- header and actions -------------------------------------------------------------------
  function renderHead() {
    if (!stack) return;
    const act = (label, fn, attrs = {}) => h('button', {type: 'button', ...attrs,
      onclick: async () => {
        try { await fn(); } catch (err) { toast(err.message, 'error'); }
      }}, label);
    const action = (key, label) => act(label, async () => {
      await api.post(`${path}/actions`, {[key]: null});
      toast(`${label}: ${name}`);
    }, {name: key});
    const can = allowedActions(stack.stack_status);
    clear(head,
      h('div', {class: 'title-row'},
        h('h1', {}, h('a', {href: `#/p/${encodeURIComponent(api.project)}/stacks`}, 'Stacks'),
          ' / ', name),
        h('span', {id: 'stack-status'}, badge(stack.stack_status)), live, drift.summary),
      h('p', {class: 'muted'}, stack.stack_status_reason || ''),
      h('p', {class: 'muted'}, stack.description || '',
        ' · created ', time(stack.creation_time),
        stack.updated_time ? [' · updated ', time(stack.updated_time)] : ''),
      h('div', {class: 'row actions'},
        can.update ? h('a', {class: 'button', href: `#/p/${encodeURIComponent(api.project)}` +
                `/stacks/${encodeURIComponent(name)}/${id}/update`}, 'Update') : null,
        can.suspend ? action('suspend', 'Suspend') : null,
        can.resume ? action('resume', 'Resume') : null,
        can.check ? action('check', 'Check') : null,
        can.drift ? act('Detect drift', async () => {
          await drift.detect();
          toast(`Detecting drift of ${name}`);
        }, {name: 'drift'}) : null,
        can.cancel_update ? action('cancel_update', 'Cancel update') : null,
        can.snapshot ? act('Snapshot', async () => {
          const snap = prompt('Snapshot name', `${name}-${new Date().toISOString().slice(0, 19)}`);
          if (snap === null) return;
          await api.post(`${path}/snapshots`, {name: snap});
          toast(`Snapshot of ${name} started`);
          loadSnapshots();
        }, {name: 'snapshot'}) : null,
        can.delete ? act('Delete', async () => {
          if (!confirm(`Delete stack ${name}? This deletes its resources.`)) return;
          await api.del(path);
          toast(`Deleting ${name}`);
        }, {name: 'delete', class: 'danger'}) : null));
  }

  // -- resources --------------------------------------------------------------------------
  const resourceFilter = h('input', {type: 'search', placeholder: 'filter by name or type',
                                     oninput: () => renderResources()});
  const resourceRows = h('tbody');
  const resourceInfo = h('span', {class: 'muted'});
  panes.resources.append(h('div', {class: 'row'}, resourceFilter, resourceInfo),
    h('table', {class: 'list resources'}, h('thead', {}, h('tr', {},
      ['Name', 'Type', 'Status', 'Reason', 'Physical id', 'Updated']
        .map(t => h('th', {}, t)))),
      resourceRows));

  function renderResources() {
    const q = resourceFilter.value.toLowerCase();
    const shown = resourceList.filter(r => !q || r.resource_name.toLowerCase().includes(q)
                                        || r.resource_type.toLowerCase().includes(q));
    const drifted = r => drift.statusOf(id, r.resource_name);
    clear(resourceRows, shown.slice(0, 300).map(r => h('tr', {
        class: drifted(r) ? 'clickable drifted' : 'clickable',
        dataset: drifted(r) ? {resource: r.resource_name, drift: drifted(r)}
          : {resource: r.resource_name}, onclick: () => showResource({key: `${id}/${r.resource_name}`,
          stackId: id, name: r.resource_name, resource: r,
          nested: (r.links || []).find(l => l.rel === 'nested')?.href})},
      h('td', {}, r.resource_name, drifted(r) ?
        [' ', h('span', {class: 'badge drift'}, `drifted: ${drifted(r)}`)] : null),
      h('td', {}, r.resource_type),
      h('td', {}, badge(r.resource_status)),
      h('td', {class: 'muted reason', title: r.resource_status_reason || ''},
        r.resource_status_reason || ''),
      h('td', {class: 'mono'}, r.physical_resource_id || ''),
      h('td', {}, time(r.updated_time)))));
    resourceInfo.textContent = shown.length > 300 ?
      `showing 300 of ${shown.length}; filter to narrow` : `${shown.length} resources`;
  }

  let shownWaits = new Set();
  async function showResource(node) {
    shownNode = node;
    if (!node) { side.hidden = true; return; }
    side.hidden = false;
    clear(side, h('h2', {}, node.name), h('p', {class: 'muted'}, 'Loading…'));
    const stackPath = node.stackId === id ? path :
      Api.linkPath((node.resource.links || []).find(l => l.rel === 'stack').href);
    const rpath = `${stackPath}/resources/${encodeURIComponent(node.name)}`;
    try {
      const [shown, meta, siblings] = await Promise.all([api.get(rpath),
        api.get(`${rpath}/metadata`),
        node.stackId === id ? {resources: resourceList} : api.get(`${stackPath}/resources`)]);
      const r = shown.resource;
      const list = siblings.resources || [];
      const dependsOn = list.filter(x => (x.required_by || []).includes(r.resource_name))
        .map(x => x.resource_name);
      const waits = waitingFor(r, list, stack?.stack_status);
      shownWaits = new Set(waits.map(x => x.resource_name));
      const hookOf = x => HOOK.exec(x.resource_status_reason || '')
        || HOOK.exec(topo.nodes.get(Topology.key(node.stackId, x.resource_name))?.reason || '');
      const waitItem = x => {
        const held = hookOf(x);
        return h('li', {dataset: {resource: x.resource_name}},
          h('button', {type: 'button', class: 'link', onclick: () => showResource({
            key: Topology.key(node.stackId, x.resource_name), stackId: node.stackId,
            name: x.resource_name, resource: x,
            nested: (x.links || []).find(l => l.rel === 'nested')?.href})}, x.resource_name),
          ' ', badge(held ? 'HOOK_PAUSED' : x.resource_status), ' ',
          h('span', {class: 'muted'}, held ? `paused until hook ${held[1]} is cleared`
            : (x.resource_status === 'INIT_COMPLETE' ? 'not started'
              : x.resource_status_reason || '')));
      };
      // a hook's pause is an event, not a state: the graph's node knows it
      const hook = HOOK.exec(r.resource_status_reason || '')
        || HOOK.exec(topo.nodes.get(node.key)?.reason || '');
      const signalBody = h('textarea', {rows: 3, name: 'signal', spellcheck: 'false',
                                        placeholder: '{"status": "SUCCESS"}'});
      const reason = h('input', {name: 'unhealthy_reason', placeholder: 'reason', size: 20});
      const run = (label, fn) => h('button', {type: 'button', name: label, onclick: async () => {
        try { await fn(); toast(`${label}: ${node.name}`); } catch (e) { toast(e.message, 'error'); }
      }}, label);
      clear(side,
        h('div', {class: 'title-row'}, h('h2', {}, r.resource_name),
          h('button', {type: 'button', class: 'link', onclick: () => { side.hidden = true; }}, '✕')),
        h('p', {}, badge(r.resource_status), ' ', r.resource_type),
        h('p', {class: 'muted'}, r.resource_status_reason || ''),
        h('dl', {},
          h('dt', {}, 'Physical id'), h('dd', {class: 'mono'}, r.physical_resource_id || '—'),
          h('dt', {}, 'Depends on'), h('dd', {}, dependsOn.join(', ') || '—'),
          h('dt', {}, 'Required by'), h('dd', {}, (r.required_by || []).join(', ') || '—'),
          h('dt', {}, 'Updated'), h('dd', {}, time(r.updated_time))),
        drift.section(node.stackId, r.resource_name),
        waits.length ? h('div', {class: 'waiting'},
          h('h3', {}, 'Not started: waiting for'), h('ul', {}, waits.map(waitItem))) : null,
        node.nested && !topo.nodes.get(node.key)?.expanded ?
          h('button', {type: 'button', name: 'expand',
                       onclick: () => expand(topo.nodes.get(node.key) || node)},
            'Open nested stack in place') : null,
        h('h3', {}, 'Attributes'), h('pre', {}, pretty(r.attributes || {})),
        h('h3', {}, 'Metadata'), h('pre', {}, pretty(meta.metadata || {})),
        h('h3', {}, 'Actions'),
        hook ? h('div', {class: 'row'}, run('Clear hook', () => api.post(`${rpath}/signal`,
                                                     {unset_hook: hook[1]})),
                 h('span', {class: 'muted'}, hook[1])) : null,
        h('label', {}, 'Signal body (JSON)'), signalBody,
        h('div', {class: 'row'}, run('Signal', () => api.post(`${rpath}/signal`,
          signalBody.value.trim() ? JSON.parse(signalBody.value) : undefined))),
        h('div', {class: 'row'}, reason, run('Mark unhealthy', () => api.patch(rpath,
          {mark_unhealthy: true, resource_status_reason: reason.value}))));
    } catch (err) {
      clear(side, h('h2', {}, node.name), h('p', {class: 'form-error'}, err.message));
    }
  }

  // -- outputs, parameters, template, environment -------------------------------------------
  function renderOutputs() {
    const outputs = stack.outputs || [];
    clear(panes.outputs, outputs.length ? h('table', {class: 'list'},
      h('thead', {}, h('tr', {}, ['Output', 'Value', 'Description'].map(t => h('th', {}, t)))),
      h('tbody', {}, outputs.map(o => h('tr', {dataset: {output: o.output_key}},
        h('td', {}, o.output_key),
        h('td', {}, o.output_error ? h('span', {class: 'form-error'}, o.output_error)
                                   : h('pre', {}, pretty(o.output_value))),
        h('td', {class: 'muted'}, o.description || '')))))
      : h('p', {class: 'muted'}, 'No outputs.'));
  }

  function renderParameters() {
    const params = stack.parameters || {};
    clear(panes.parameters, h('table', {class: 'list'},
      h('tbody', {}, Object.keys(params).sort().map(k => h('tr', {},
        h('td', {}, k), h('td', {class: 'mono'}, pretty(params[k])))))));
  }

  async function loadText(tabName, suffix) {
    try {
      const data = await api.get(`${path}/${suffix}`);
      clear(panes[tabName], h('pre', {class: 'code'}, pretty(data)));
    } catch (err) {
      clear(panes[tabName], h('p', {class: 'form-error'}, err.message));
    }
  }

  // -- snapshots --------------------------------------------------------------------------
  async function loadSnapshots() {
    try {
      const snaps = (await api.get(`${path}/snapshots`)).snapshots || [];
      clear(panes.snapshots, snaps.length ? h('table', {class: 'list'},
        h('thead', {}, h('tr', {}, ['Name', 'Status', 'Created', ''].map(t => h('th', {}, t)))),
        h('tbody', {}, snaps.map(s => h('tr', {},
          h('td', {}, s.name || s.id), h('td', {}, badge(s.status)),
          h('td', {}, time(s.creation_time)),
          h('td', {}, h('button', {type: 'button', onclick: async () => {
            if (!confirm(`Restore ${name} to snapshot ${s.name || s.id}?`)) return;
            try {
              await api.post(`${path}/snapshots/${s.id}/restore`);
              toast(`Restoring ${name}`);
            } catch (e) { toast(e.message, 'error'); }
          }}, 'Restore'), ' ', h('button', {type: 'button', onclick: async () => {
            try { await api.del(`${path}/snapshots/${s.id}`); loadSnapshots(); }
            catch (e) { toast(e.message, 'error'); }
          }}, 'Delete'))))))
        : h('p', {class: 'muted'}, 'No snapshots.'));
    } catch (err) {
      clear(panes.snapshots, h('p', {class: 'form-error'}, err.message));
    }
  }

  // -- tabs ---------------------------------------------------------------------------------
  function select(t) {
    for (const [key, pane] of Object.entries(panes)) pane.hidden = key !== t;
    for (const a of tabs.children) a.classList.toggle('on', a.dataset.tab === t);
    if (t === 'template') loadText('template', 'template');
    if (t === 'environment') loadText('environment', 'environment');
    if (t === 'snapshots') loadSnapshots();
    if (t === 'changesets') changeSetsPane(panes.changesets, api, name, id);
    if (t === 'history') historyPane(panes.history, api, name, id);
    if (t === 'topology') topo.resize();
    if (t === 'timeline') timeline.draw();
  }
  for (const t of TABS) {
    tabs.append(h('a', {href: `#/p/${encodeURIComponent(api.project)}/stacks/` +
                         `${encodeURIComponent(name)}/${id}?tab=${t}`, dataset: {tab: t}},
                  LABELS[t] || t[0].toUpperCase() + t.slice(1)));
  }

  clear(view, head, tabs, h('div', {class: 'stack-body'},
    h('div', {class: 'panes'}, Object.values(panes)), side));
  select(TABS.includes(tab) ? tab : 'topology');
  loadStack();
  loadResources();
  drift.load();
  const stop = followEvents(api.url(`${path}/events`, {stream: 'true', nested_depth: 5}),
    onEvent, {onState: s => { live.textContent = s === 'live' ? '● live' : s; },
              onEnd: () => { live.textContent = 'deleted'; loadStack(); }});
  onLeave(() => {
    stop(); drift.stop(); clearTimeout(resourcesTimer); clearTimeout(stackTimer); clearTimeout(sideTimer);
  });
  window.kilnDashboard = {topology: topo, timeline, stackId: id, Topology};
  return {select};
}
