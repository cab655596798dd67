// The event timeline: one row per resource, one bar per action (from its IN_PROGRESS
// event to the event that ended it), on a shared time axis, so a user sees what ran in
// parallel and what waited. Drawn on a canvas that only paints the rows in view; the
// scrolling is done by a tall spacer behind it, so thousands of rows stay cheap.
import { statusClass } from './dom.js';

const ROW_H = 22, LABEL_W = 220, AXIS_H = 26;
const COLORS = {ok: '#2e9d57', busy: '#2f76d2', fail: '#d2452f', idle: '#8a939e'};

export class Timeline {
  constructor(container) {
    this.scroller = container;
    this.spacer = document.createElement('div');
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'timeline-canvas';
    container.append(this.canvas, this.spacer);
    this.ctx = this.canvas.getContext('2d');
    this.rows = new Map();   // "stack/resource" -> {label, bars: [], first}
    this.order = [];
    this.t0 = Infinity; this.t1 = -Infinity;
    this.frame = 0;
    container.addEventListener('scroll', () => this.draw());
    new ResizeObserver(() => this.draw()).observe(container);
  }

  /** Add one event (as the event list or stream gives it) of the stack ``stackName``
   * (``stackId``) or of one nested in it. */
  add(ev, stackName, stackId) {
    const t = Date.parse(ev.event_time.endsWith('Z') ? ev.event_time : ev.event_time + 'Z');
    if (isNaN(t)) return;
    const owner = ev.stack_name || stackName || '';
    const nested = stackId && ev.stack_id && ev.stack_id !== stackId;
    // a nested stack's own state: the row of the resource it belongs to shows it
    if (nested && ev.physical_resource_id === ev.stack_id) return;
    const key = `${owner}/${ev.resource_name}`;
    let row = this.rows.get(key);
    if (!row) {
      const label = nested ? `${stackName}.${this.stackPath(ev.stack_id, owner, stackName)}` +
                             `.${ev.resource_name}` : ev.resource_name;
      row = {label, bars: [], first: t};
      this.rows.set(key, row);
      this.order.push(key);
    }
    const [action] = String(ev.resource_status).split('_');
    const status = String(ev.resource_status);
    const open = row.bars.find(b => b.action === action && b.end === null);
    if (status.endsWith('_IN_PROGRESS')) {
      if (!open) row.bars.push({action, start: t, end: null, status});
    } else if (open) {
      open.end = t; open.status = status;
    } else {
      row.bars.push({action, start: t, end: t, status});
    }
    this.t0 = Math.min(this.t0, t); this.t1 = Math.max(this.t1, t);
    this.draw();
  }

  /** A nested stack's path from the top stack (``group.0``), as the CLI names it. Heat
   * names a nested stack ``<parent stack>-<resource>-<suffix>``: its path is its parent's
   * path and that resource's name, the longest known parent first. Worked out from the
   * name, so a member's first event already gets the label its later ones get; a name
   * that does not fit (a stack renamed by hand) is shown as it is. */
  stackPath(id, name, top) {
    this.paths ??= new Map();
    this.names ??= new Map([[top, '']]);
    let known = this.paths.get(id);
    if (known !== undefined) return known;
    known = name;
    const suffix = name.lastIndexOf('-');
    let cut = suffix;
    while (cut > 0) {
      cut = name.lastIndexOf('-', cut - 1);
      if (cut <= 0) break;
      const parent = name.slice(0, cut);
      if (this.names.has(parent)) {
        const resource = name.slice(cut + 1, suffix);
        const above = this.names.get(parent);
        known = above ? `${above}.${resource}` : resource;
        break;
      }
    }
    this.paths.set(id, known);
    this.names.set(name, known);
    return known;
  }

  /** The rows' labels, top to bottom. */
  labels() {
    return this.order.map(k => this.rows.get(k).label);
  }

  draw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.paint(); });
  }

  paint() {
    const width = this.scroller.clientWidth, height = this.scroller.clientHeight;
    const dpr = window.devicePixelRatio || 1;
    this.spacer.style.height = `${AXIS_H + this.order.length * ROW_H}px`;
    this.canvas.style.width = `${width}px`; this.canvas.style.height = `${height}px`;
    this.canvas.width = Math.round(width * dpr); this.canvas.height = Math.round(height * dpr);
    const {ctx} = this;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    if (!this.order.length) return;
    const now = Date.now();
    const end = Math.max(this.t1, this.running() ? now : this.t1);
    const span = Math.max(end - this.t0, 1000);
    const plotW = Math.max(width - LABEL_W - 20, 50);
    const xOf = t => LABEL_W + ((t - this.t0) / span) * plotW;
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H));
    const last = Math.min(this.order.length, first + Math.ceil(height / ROW_H) + 1);
    ctx.font = '11px system-ui, sans-serif';
    for (let i = first; i < last; i++) {
      const row = this.rows.get(this.order[i]);
      const y = AXIS_H + i * ROW_H - top;
      if (i % 2) { ctx.fillStyle = '#f6f8fa'; ctx.fillRect(0, y, width, ROW_H); }
      ctx.fillStyle = '#1d232b';
      ctx.fillText(row.label, 6, y + 15, LABEL_W - 12);
      for (const bar of row.bars) {
        const x0 = xOf(bar.start), x1 = xOf(bar.end ?? now);
        ctx.fillStyle = COLORS[statusClass(bar.end === null ? 'X_IN_PROGRESS' : bar.status)];
        ctx.fillRect(x0, y + 4, Math.max(x1 - x0, 3), ROW_H - 8);
      }
    }
    // the axis stays on top
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, width, AXIS_H);
    ctx.strokeStyle = '#d6dbe1'; ctx.beginPath(); ctx.moveTo(0, AXIS_H - 0.5);
    ctx.lineTo(width, AXIS_H - 0.5); ctx.stroke();
    ctx.fillStyle = '#5b6470';
    const step = niceStep(span / 8);
    for (let t = 0; t <= span; t += step) {
      const x = xOf(this.t0 + t);
      ctx.fillText(`+${fmt(t)}`, x + 2, 16);
      ctx.fillRect(x, AXIS_H - 6, 1, 6);
    }
    ctx.fillText('resource', 6, 16);
    this.scroller.dataset.rows = String(this.order.length);
  }

  running() {
    for (const row of this.rows.values()) if (row.bars.some(b => b.end === null)) return true;
    return false;
  }
}

function niceStep(raw) {
  const steps = [100, 250, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000,
                 300000, 600000, 1800000, 3600000];
  return steps.find(s => s >= raw) || 3600000;
}

function fmt(ms) {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)}s`;
  return `${Math.floor(ms / 60000)}m${Math.round((ms % 60000) / 1000)}s`;
}
