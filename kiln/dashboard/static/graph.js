// The topology view: a stack's resources and their dependencies drawn on a canvas.
//
// Layout: each resource goes in the column after the deepest resource it depends on
// (dependencies flow left to right); a column with many resources wraps into a grid,
// so a 10,000-member group is a block, not a strip 400,000 pixels tall. A nested stack
// expanded in place becomes a box holding its own layout, recursively.
// Drawing: only what is inside the viewport is drawn (nodes are found through a grid
// index), labels and edges are dropped when zoomed far out, and frames are coalesced
// with requestAnimationFrame, so 10,000 resources pan and zoom without freezing.
// A state change recolours a node without any re-layout.
import { statusClass } from './dom.js';

const NODE_W = 170, NODE_H = 38, GAP_X = 60, GAP_Y = 14, PAD = 16, HEADER = 26;
const COLORS = {ok: '#2e9d57', busy: '#2f76d2', fail: '#d2452f', idle: '#8a939e'};
const DRIFT_COLOR = '#d9480f';
const CELL = 400;
const PAUSED = /paused until Hook ([\w-]+) is cleared/;

/** What a node shows: its status, or HOOK_PAUSED while a lifecycle hook holds it. */
export function shownStatus(n) {
  return PAUSED.test(n.reason || '') && !String(n.status).endsWith('_FAILED')
    ? 'HOOK_PAUSED' : n.status;
}

export class Topology {
  constructor(canvas, {onSelect, onExpand} = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.onSelect = onSelect || (() => {});
    this.onExpand = onExpand || (() => {});
    this.nodes = new Map();     // key -> node
    this.roots = [];            // keys of the top stack's resources
    this.scale = 1; this.tx = 20; this.ty = 20;
    this.selected = null;
    this.frame = 0;
    this.placed = [];           // nodes with absolute positions (after layout)
    this.index = new Map();     // grid cell -> nodes
    this.drifted = new Set();   // keys of resources a drift detection found changed
    this.bindEvents();
    new ResizeObserver(() => this.resize()).observe(canvas);
  }

  static key(stackId, name) { return `${stackId}/${name}`; }

  /** The resources of one stack (top level when parentKey is null). */
  setResources(stackId, resources, parentKey = null) {
    const keys = [];
    for (const r of resources) {
      const key = Topology.key(stackId, r.resource_name);
      const old = this.nodes.get(key);
      const nested = (r.links || []).find(l => l.rel === 'nested');
      this.nodes.set(key, {
        key, stackId, name: r.resource_name, type: r.resource_type,
        status: r.resource_status, reason: r.resource_status_reason,
        requiredBy: (r.required_by || []).map(n => Topology.key(stackId, n)),
        nested: nested ? nested.href : null, children: old ? old.children : null,
        expanded: old ? old.expanded : false, parent: parentKey, resource: r,
      });
      keys.push(key);
    }
    if (parentKey === null) this.roots = keys;
    else {
      const parent = this.nodes.get(parentKey);
      parent.children = keys; parent.expanded = true;
    }
    this.layout();
  }

  collapse(key) {
    const node = this.nodes.get(key);
    if (node) { node.expanded = false; this.layout(); }
  }

  /** A resource's state changed (from the event stream). False if it is unknown. */
  update(stackId, name, status, reason) {
    const node = this.nodes.get(Topology.key(stackId, name));
    if (!node) return false;
    node.status = status; node.reason = reason;
    this.draw();
    return true;
  }

  /** Mark the resources (by key) that drifted: a dashed outline and a "drifted" tag.
   * The canvas's data-drifted attribute names them (what a test can read). */
  setDrift(keys) {
    this.drifted = new Set(keys);
    this.markDrift();
    this.draw();
  }

  markDrift() {
    this.canvas.dataset.drifted = this.placed.filter(n => this.drifted.has(n.key))
      .map(n => n.name).sort().join(',');
  }

  counts() {
    const out = {};
    const walk = keys => {
      for (const key of keys) {
        const n = this.nodes.get(key);
        const s = shownStatus(n);
        out[s] = (out[s] || 0) + 1;
        if (n.expanded && n.children) walk(n.children);
      }
    };
    walk(this.roots);
    return out;
  }

  // -- layout -------------------------------------------------------------------------
  layout() {
    this.groups = new Map();
    const size = this.layoutGroup(this.roots);
    this.width = size.w; this.height = size.h;
    this.placed = [];
    this.place(this.roots, 0, 0);
    this.index = new Map();
    for (const n of this.placed) {
      for (let cx = Math.floor(n.x / CELL); cx <= Math.floor((n.x + n.w) / CELL); cx++) {
        for (let cy = Math.floor(n.y / CELL); cy <= Math.floor((n.y + n.h) / CELL); cy++) {
          const cell = `${cx},${cy}`;
          if (!this.index.has(cell)) this.index.set(cell, []);
          this.index.get(cell).push(n);
        }
      }
    }
    // for people reading the page with tools (and for tests): what is shown
    this.canvas.dataset.nodes = String(this.placed.length);
    this.canvas.dataset.expanded = this.placed.filter(n => n.inner).map(n => n.name).join(',');
    this.markDrift();
    this.draw();
  }

  /** Sizes every node of the group (recursively) and its columns; returns its size. */
  layoutGroup(keys) {
    const inGroup = new Set(keys);
    const deps = new Map(keys.map(k => [k, []]));
    for (const k of keys) {
      for (const dependant of this.nodes.get(k).requiredBy) {
        if (inGroup.has(dependant)) deps.get(dependant).push(k);
      }
    }
    const depth = new Map();
    const depthOf = start => {          // iterative longest path, safe on deep chains
      const stack = [[start, false]];
      while (stack.length) {
        const [k, done] = stack.pop();
        if (depth.has(k)) continue;
        if (done) {
          let d = 0;
          for (const p of deps.get(k)) d = Math.max(d, (depth.get(p) ?? -1) + 1);
          depth.set(k, d);
          continue;
        }
        stack.push([k, true]);
        for (const p of deps.get(k)) if (!depth.has(p)) stack.push([p, false]);
      }
      return depth.get(start);
    };
    const columns = [];
    for (const k of keys) {
      const d = depthOf(k);
      (columns[d] ||= []).push(k);
    }
    const group = {columns: [], w: 0, h: 0};
    let x = 0;
    for (const col of columns.filter(Boolean)) {
      col.sort((a, b) => this.nodes.get(a).name.localeCompare(this.nodes.get(b).name,
                                                               undefined, {numeric: true}));
      for (const k of col) this.sizeNode(this.nodes.get(k));
      // wrap a long column into a grid of about square shape
      const big = col.length > 40 && col.every(k => !this.nodes.get(k).expanded);
      const rows = big ? Math.ceil(Math.sqrt(col.length * 3)) : col.length;
      const sub = [];
      for (let i = 0; i < col.length; i += rows) sub.push(col.slice(i, i + rows));
      let colW = 0, colH = 0;
      const placedCols = [];
      for (const part of sub) {
        const w = Math.max(...part.map(k => this.nodes.get(k).w));
        const h = part.reduce((s, k) => s + this.nodes.get(k).h + GAP_Y, -GAP_Y);
        placedCols.push({x: x + colW, keys: part});
        colW += w + (big ? 10 : 0);
        colH = Math.max(colH, h);
      }
      group.columns.push(...placedCols);
      x += colW + GAP_X;
      group.h = Math.max(group.h, colH);
    }
    group.w = Math.max(0, x - GAP_X);
    this.groups.set(keys, group);
    return group;
  }

  sizeNode(node) {
    if (node.expanded && node.children) {
      const inner = this.layoutGroup(node.children);
      node.inner = inner;
      node.w = Math.max(NODE_W, inner.w + 2 * PAD);
      node.h = inner.h + HEADER + 2 * PAD;
    } else {
      node.inner = null; node.w = NODE_W; node.h = NODE_H;
    }
  }

  place(keys, ox, oy) {
    const group = this.groups.get(keys);
    for (const col of group.columns) {
      let y = oy;
      for (const k of col.keys) {
        const n = this.nodes.get(k);
        n.x = ox + col.x; n.y = y;
        this.placed.push(n);
        if (n.inner) this.place(n.children, n.x + PAD, n.y + HEADER + PAD);
        y += n.h + GAP_Y;
      }
    }
  }

  // -- view -------------------------------------------------------------------------
  resize() {
    const dpr = window.devicePixelRatio || 1;
    const {width, height} = this.canvas.getBoundingClientRect();
    this.canvas.width = Math.max(1, Math.round(width * dpr));
    this.canvas.height = Math.max(1, Math.round(height * dpr));
    this.dpr = dpr;
    this.draw();
  }

  fit() {
    const {width, height} = this.canvas.getBoundingClientRect();
    if (!this.width || !width) return;
    this.scale = Math.min(1.5, (width - 40) / this.width, (height - 40) / Math.max(this.height, 1));
    this.scale = Math.max(this.scale, 0.01);
    this.tx = (width - this.width * this.scale) / 2;
    this.ty = 20;
    this.draw();
  }

  /** Where a node's centre is on the page (tests and keyboard users). */
  screenPoint(key) {
    const n = this.nodes.get(key);
    if (!n || n.x === undefined) return null;
    const rect = this.canvas.getBoundingClientRect();
    const cy = n.inner ? n.y + HEADER / 2 : n.y + n.h / 2;
    return {x: rect.left + this.tx + (n.x + n.w / 2) * this.scale,
            y: rect.top + this.ty + cy * this.scale};
  }

  visible() {
    const {width, height} = this.canvas.getBoundingClientRect();
    return {x0: -this.tx / this.scale, y0: -this.ty / this.scale,
            x1: (width - this.tx) / this.scale, y1: (height - this.ty) / this.scale};
  }

  nodesIn(v) {
    const found = new Set();
    const cx0 = Math.floor(v.x0 / CELL), cx1 = Math.floor(v.x1 / CELL);
    const cy0 = Math.floor(v.y0 / CELL), cy1 = Math.floor(v.y1 / CELL);
    if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1) > this.index.size) {
      for (const n of this.placed) if (intersects(n, v)) found.add(n);
      return found;
    }
    for (let cx = cx0; cx <= cx1; cx++) {
      for (let cy = cy0; cy <= cy1; cy++) {
        for (const n of this.index.get(`${cx},${cy}`) || []) if (intersects(n, v)) found.add(n);
      }
    }
    return found;
  }

  draw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.paint(); });
  }

  paint() {
    const {ctx, dpr} = this;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.setTransform(dpr * this.scale, 0, 0, dpr * this.scale, dpr * this.tx, dpr * this.ty);
    const v = this.visible();
    const shown = this.nodesIn(v);
    // boxes of expanded nested stacks first, then edges, then resources on top
    for (const n of shown) if (n.inner) this.paintBox(n);
    if (shown.size < 4000) this.paintEdges(shown, v);
    for (const n of shown) if (!n.inner) this.paintNode(n);
  }

  paintBox(n) {
    const {ctx} = this;
    const color = COLORS[statusClass(n.status)];
    ctx.fillStyle = '#f4f6f9'; ctx.strokeStyle = color; ctx.lineWidth = 2 / this.scale;
    roundRect(ctx, n.x, n.y, n.w, n.h, 8); ctx.fill(); ctx.stroke();
    ctx.fillStyle = color; roundRect(ctx, n.x, n.y, n.w, HEADER, 8); ctx.fill();
    if (this.scale * 12 >= 6) {
      ctx.fillStyle = '#fff'; ctx.font = '12px system-ui, sans-serif';
      ctx.fillText(`▾ ${n.name} · ${n.type} · ${n.status}`, n.x + 8, n.y + 17, n.w - 16);
    }
  }

  /** Edges run from a resource to the ones that depend on it (its required_by), with
   * an arrowhead at the dependent's end: the order the resources are created in. The
   * pairs drawn last are kept in ``arrows`` (what a test, or a curious user, can read). */
  paintEdges(shown, v) {
    const {ctx} = this;
    ctx.strokeStyle = '#aab3bd'; ctx.lineWidth = 1 / this.scale;
    ctx.beginPath();
    const heads = [];
    this.arrows = [];
    for (const n of this.placed) {
      for (const k of n.requiredBy) {
        const m = this.nodes.get(k);
        if (!m || m.x === undefined || !isPlaced(m, this)) continue;
        if (!shown.has(n) && !shown.has(m)) {
          const box = {x: Math.min(n.x, m.x), y: Math.min(n.y, m.y),
                       w: Math.abs(n.x - m.x) + n.w, h: Math.abs(n.y - m.y) + n.h};
          if (!intersects(box, v)) continue;
        }
        const y0 = n.inner ? n.y + HEADER / 2 : n.y + n.h / 2;
        const y1 = m.inner ? m.y + HEADER / 2 : m.y + m.h / 2;
        const x0 = n.x + n.w, x1 = m.x;
        ctx.moveTo(x0, y0);
        ctx.bezierCurveTo(x0 + 25, y0, x1 - 25, y1, x1, y1);
        heads.push(x1, y1);
        this.arrows.push({from: n.key, to: m.key});
      }
    }
    ctx.stroke();
    // the curve ends level (its last control point is straight left of its end), so
    // every head points right; too small to see far out, where they are not drawn
    if (this.scale < 0.3) { this.canvas.dataset.arrows = '0'; return; }
    ctx.fillStyle = '#8a939e';
    ctx.beginPath();
    for (let i = 0; i < heads.length; i += 2) {
      const x = heads[i], y = heads[i + 1];
      ctx.moveTo(x, y); ctx.lineTo(x - 8, y - 4); ctx.lineTo(x - 8, y + 4); ctx.closePath();
    }
    ctx.fill();
    this.canvas.dataset.arrows = String(heads.length / 2);
  }

  paintNode(n) {
    this.paintNodeBody(n);
    if (this.drifted.has(n.key)) this.paintDrift(n);
  }

  paintNodeBody(n) {
    const {ctx} = this;
    const status = shownStatus(n);
    const color = COLORS[statusClass(status)];
    ctx.fillStyle = '#fff'; ctx.strokeStyle = color;
    ctx.lineWidth = (n.key === this.selected ? 3 : 1.5) / this.scale;
    if (this.scale < 0.15) {           // far out: coloured blocks only
      ctx.fillStyle = color; ctx.fillRect(n.x, n.y, n.w, n.h);
      return;
    }
    roundRect(ctx, n.x, n.y, n.w, n.h, 6); ctx.fill(); ctx.stroke();
    ctx.fillStyle = color; ctx.fillRect(n.x, n.y + 4, 5, n.h - 8);
    if (this.scale < 0.45) return;
    ctx.fillStyle = '#1d232b'; ctx.font = '600 12px system-ui, sans-serif';
    ctx.fillText((n.nested ? '▸ ' : '') + n.name, n.x + 12, n.y + 15, n.w - 20);
    ctx.fillStyle = '#5b6470'; ctx.font = '10px system-ui, sans-serif';
    ctx.fillText(`${n.type} · ${status}`, n.x + 12, n.y + 30, n.w - 20);
  }

  paintDrift(n) {
    const {ctx} = this;
    ctx.save();
    ctx.strokeStyle = DRIFT_COLOR; ctx.lineWidth = 2.5 / this.scale;
    ctx.setLineDash([6 / this.scale, 4 / this.scale]);
    roundRect(ctx, n.x - 4, n.y - 4, n.w + 8, n.h + 8, 8); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = DRIFT_COLOR; ctx.font = '600 10px system-ui, sans-serif';
    const label = 'drifted', w = ctx.measureText(label).width + 8;
    roundRect(ctx, n.x + n.w - w - 4, n.y - 10, w, 14, 6); ctx.fill();
    ctx.fillStyle = '#fff'; ctx.fillText(label, n.x + n.w - w, n.y);
    ctx.restore();
  }

  // -- interaction ------------------------------------------------------------------
  hit(clientX, clientY) {
    const rect = this.canvas.getBoundingClientRect();
    const x = (clientX - rect.left - this.tx) / this.scale;
    const y = (clientY - rect.top - this.ty) / this.scale;
    let best = null;
    for (const n of this.nodesIn({x0: x, y0: y, x1: x, y1: y})) {
      if (x >= n.x && x <= n.x + n.w && y >= n.y && y <= n.y + n.h) {
        if (n.inner && y > n.y + HEADER) continue;     // inside the box, not its header
        if (!best || n.w * n.h < best.w * best.h) best = n;
      }
    }
    return best;
  }

  bindEvents() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener('pointerdown', e => {
      drag = {x: e.clientX, y: e.clientY, tx: this.tx, ty: this.ty, moved: false};
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener('pointermove', e => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) { this.tx = drag.tx + dx; this.ty = drag.ty + dy; this.draw(); }
    });
    c.addEventListener('pointerup', e => {
      const wasDrag = drag && drag.moved;
      drag = null;
      if (wasDrag) return;
      const n = this.hit(e.clientX, e.clientY);
      this.selected = n ? n.key : null;
      this.draw();
      this.onSelect(n);
    });
    c.addEventListener('dblclick', e => {
      const n = this.hit(e.clientX, e.clientY);
      if (!n) return;
      if (n.inner) this.collapse(n.key);
      else if (n.nested) this.onExpand(n);
    });
    c.addEventListener('wheel', e => {
      e.preventDefault();
      const rect = c.getBoundingClientRect();
      const px = e.clientX - rect.left, py = e.clientY - rect.top;
      const factor = Math.exp(-e.deltaY * 0.0015);
      const scale = Math.min(4, Math.max(0.005, this.scale * factor));
      this.tx = px - (px - this.tx) * (scale / this.scale);
      this.ty = py - (py - this.ty) * (scale / this.scale);
      this.scale = scale;
      this.draw();
    }, {passive: false});
  }
}

function isPlaced(n, topo) {
  // a node inside a collapsed box keeps stale coordinates: skip it
  let p = n.parent;
  while (p) {
    const parent = topo.nodes.get(p);
    if (!parent || !parent.expanded) return false;
    p = parent.parent;
  }
  return true;
}

function intersects(n, v) {
  return n.x <= v.x1 && n.x + n.w >= v.x0 && n.y <= v.y1 && n.y + n.h >= v.y0;
}

function roundRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y); ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r); ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r); ctx.closePath();
}
