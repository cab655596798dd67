// Drift in the dashboard: "Detect drift" starts a detection (POST .../drift), which reads
// every resource back from the cloud and changes nothing; the newest result (GET
// .../drift) marks each drifted resource on the topology and in the resources table,
// and a resource's side panel lists its property differences.
import { h, clear, time, pretty } from './dom.js';

const DRIFTED = new Set(['MODIFIED', 'DELETED']);
const POLL_MS = 1000;

export class Drift {
  /** *onChange* runs whenever a new result is known. */
  constructor(api, path, onChange) {
    this.api = api; this.path = path; this.onChange = onChange;
    this.result = null;
    this.byKey = new Map();     // `<stack id>/<resource>` -> that resource's result
    this.timer = 0;
    // never empty, so that the result arriving does not move the page under the mouse
    this.summary = h('span', {id: 'drift-status', class: 'muted'}, 'Drift: …');
  }

  /** The newest detection, if any (a stack never checked has none). */
  async load() {
    try {
      this.show((await this.api.get(`${this.path}/drift`)).drift);
    } catch (err) {
      if (err.status !== 404) this.summary.textContent = `Drift: ${err.message}`;
    }
  }

  /** Start a detection and follow it until it ends. */
  async detect() {
    this.show((await this.api.post(`${this.path}/drift`)).drift);
  }

  show(run) {
    clearTimeout(this.timer);
    if (!run) return;
    this.result = run;
    this.byKey = new Map((run.resources || []).map(r => [`${r.stack_id}/${r.resource_name}`, r]));
    const busy = run.detection_status === 'DETECTION_IN_PROGRESS';
    const never = !run.detection_id;
    clear(this.summary, busy ? 'Detecting drift…' : never ? 'Drift: never detected' : [
      'Drift: ', h('span', {class: `badge ${run.stack_drift_status === 'DRIFTED' ? 'drift' : 'ok'}`},
        run.stack_drift_status || run.detection_status),
      run.stack_drift_status === 'DRIFTED' ? `${run.drifted_resource_count} resource(s) drifted, ` : '',
      'checked ', time(run.timestamp),
      run.detection_status_reason ? ` · ${run.detection_status_reason}` : '']);
    this.summary.dataset.drift = busy ? 'DETECTION_IN_PROGRESS' : (run.stack_drift_status || '');
    this.summary.dataset.checked = never ? 'never' : 'yes';
    if (busy) this.timer = setTimeout(() => this.load(), POLL_MS);
    this.onChange();
  }

  /** The drifted resources' keys (for the topology). */
  driftedKeys() {
    return new Set([...this.byKey].filter(([, r]) => DRIFTED.has(r.status)).map(([k]) => k));
  }

  /** A resource's drift status, or null when it drifted not (or was never checked). */
  statusOf(stackId, name) {
    const r = this.byKey.get(`${stackId}/${name}`);
    return r && DRIFTED.has(r.status) ? r.status : null;
  }

  /** The side panel's section for one resource: its status and each difference. */
  section(stackId, name) {
    const r = this.byKey.get(`${stackId}/${name}`);
    if (!r) return null;
    const diffs = r.differences || [];
    return h('div', {class: 'drift', id: 'resource-drift', dataset: {status: r.status}},
      h('h3', {}, 'Drift'),
      h('p', {}, h('span', {class: `badge ${DRIFTED.has(r.status) ? 'drift' : 'ok'}`}, r.status),
        ' checked ', time(r.timestamp), r.reason ? h('span', {class: 'muted'}, ` ${r.reason}`) : ''),
      diffs.length ? h('table', {class: 'list drift-diffs'},
        h('thead', {}, h('tr', {}, ['Property', 'Difference', 'Template', 'Cloud']
          .map(t => h('th', {}, t)))),
        h('tbody', {}, diffs.map(d => h('tr', {dataset: {path: d.path}},
          h('td', {class: 'mono'}, d.path), h('td', {}, d.type),
          h('td', {}, h('pre', {}, pretty(d.expected ?? '—'))),
          h('td', {}, h('pre', {}, pretty(d.actual ?? '—'))))))) : null);
  }

  stop() { clearTimeout(this.timer); }
}
