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

// the browser's own locale and time zone (undefined: the user's), one formatter for all
const DATES = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'medium'});

/** A <time> element: the moment in the browser's locale and time zone, with the exact
 * ISO 8601 time (UTC, as the API gives it) in its tooltip and datetime attribute. The
 * API's times carry no zone; they are UTC. */
export function time(iso) {
  if (!iso) return '—';
  const utc = /([zZ]|[+-]\d\d:?\d\d)$/.test(iso) ? iso : iso + 'Z';
  const d = new Date(utc);
  if (isNaN(d)) return iso;
  const exact = d.toISOString().replace('.000Z', 'Z');
  return h('time', {datetime: exact, title: exact}, DATES.format(d));
}

export function pretty(value) {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}
