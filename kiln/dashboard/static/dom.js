// Building DOM nodes from data without innerHTML, so no text from the API is ever
// interpreted as markup.

/** h('div', {class: 'x', onclick: fn}, 'text', child, [more]) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (key === 'value' || key === 'checked') {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** The CSS class of a Heat status: ok, busy, fail or idle. */
export function statusClass(status) {
  const s = String(status || '');
  if (s.endsWith('_IN_PROGRESS') || s === 'HOOK_PAUSED') return 'busy';
  if (s.endsWith('_FAILED')) return 'fail';
  if (s.startsWith('DELETE_') || s.startsWith('INIT_')) return 'idle';
  if (s.endsWith('_COMPLETE')) return 'ok';
  return 'idle';
}

export function badge(status) {
  return h('span', {class: `badge ${statusClass(status)}`}, status || '—');
}

export function toast(text, kind = 'info') {
  const box = document.getElementById('toast');
  const item = h('div', {class: `toast ${kind}`}, text);
  box.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 9000 : 4000);
}

export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso.endsWith('Z') ? iso : iso + 'Z');
  return isNaN(d) ? iso : d.toLocaleString();
}

export function pretty(value) {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}
