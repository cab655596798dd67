// The stack list: status, filters, name search (any part of the name, in any case:
// Kiln's name_contains), sorting and paging, all done by the API (limit/marker paging,
// filters, sort_keys), so thousands of stacks cost one page.
import { h, clear, badge, time } from './dom.js';

const PAGE = 50;
const COLUMNS = [['stack_name', 'Name'], ['stack_status', 'Status'],
                 ['creation_time', 'Created'], ['updated_time', 'Updated']];

export function stackList(view, api, params, {go}) {
  const state = {
    sort: params.get('sort') || 'creation_time', dir: params.get('dir') || 'desc',
    status: params.get('status') || '', action: params.get('action') || '',
    name: params.get('name') || '', tag: params.get('tag') || '',
    markers: [], marker: null,
  };
  const body = h('tbody');
  const head = h('thead');
  const info = h('span', {class: 'muted', id: 'list-info'});
  const prev = h('button', {type: 'button', name: 'previous', onclick: () => page(-1)},
                   '‹ Previous');
  const next = h('button', {type: 'button', name: 'next', onclick: () => page(1)}, 'Next ›');
  let last = [];

  const status = h('select', {name: 'status', onchange: () => refilter()},
    ['', 'COMPLETE', 'IN_PROGRESS', 'FAILED'].map(s => h('option', {value: s}, s || 'any status')));
  status.value = state.status;
  const action = h('select', {name: 'action', onchange: () => refilter()},
    ['', 'CREATE', 'UPDATE', 'DELETE', 'ROLLBACK', 'SUSPEND', 'RESUME', 'CHECK', 'SNAPSHOT',
     'RESTORE', 'ADOPT'].map(s => h('option', {value: s}, s || 'any action')));
  action.value = state.action;
  const name = h('input', {type: 'search', name: 'name', placeholder: 'name contains', size: 18,
                           value: state.name});
  const tag = h('input', {type: 'search', name: 'tag', placeholder: 'tag', size: 10,
                          value: state.tag});
  const search = h('form', {class: 'filters', onsubmit: e => { e.preventDefault(); refilter(); }},
    status, action, name, tag, h('button', {type: 'submit'}, 'Search'),
    h('button', {type: 'button', onclick: () => load()}, 'Refresh'));

  function refilter() {
    const q = new URLSearchParams();
    for (const [k, v] of [['status', status.value], ['action', action.value],
                          ['name', name.value.trim()], ['tag', tag.value.trim()],
                          ['sort', state.sort], ['dir', state.dir]]) if (v) q.set(k, v);
    go(`stacks?${q}`);
  }

  // Heat's stack list (so Kiln's) gives every stack an empty description: reading each
  // template for it would cost the list its one query. The column is shown only when
  // the page's stacks have one (none today), rather than always empty.
  let described = false;

  function header() {
    return h('tr', {}, COLUMNS.map(([key, label]) => {
      const on = state.sort === key;
      return h('th', {class: on ? 'sorted' : '', 'aria-sort': on ?
                      (state.dir === 'asc' ? 'ascending' : 'descending') : 'none'},
        h('button', {type: 'button', class: 'link', onclick: () => {
          state.dir = on && state.dir === 'asc' ? 'desc' : 'asc';
          state.sort = key;
          refilter();
        }}, label, on ? (state.dir === 'asc' ? ' ▲' : ' ▼') : ''));
    }), described ? h('th', {}, 'Description') : null);
  }

  async function load() {
    const query = {limit: PAGE, sort_keys: state.sort, sort_dir: state.dir,
                   marker: state.marker, status: state.status || undefined,
                   action: state.action || undefined, name_contains: state.name || undefined,
                   tags: state.tag || undefined, with_count: 'true'};
    try {
      const data = await api.get('/stacks', query);
      last = data.stacks || [];
      described = last.some(s => s.description);
      clear(head, header());
      clear(body, last.length ? last.map(row) :
            h('tr', {}, h('td', {colspan: columns(), class: 'muted'}, 'No stacks.')));
      const from = state.markers.length * PAGE;
      info.textContent = data.count !== undefined ?
        `${last.length ? from + 1 : 0}–${from + last.length} of ${data.count}` : '';
      prev.disabled = !state.markers.length;
      next.disabled = last.length < PAGE;
    } catch (err) {
      clear(body, h('tr', {}, h('td', {colspan: columns(), class: 'form-error'},
                                    err.message)));
    }
  }

  function page(step) {
    if (step > 0 && last.length) {
      state.markers.push(state.marker);
      state.marker = last[last.length - 1].id;
    } else if (step < 0 && state.markers.length) {
      state.marker = state.markers.pop();
    }
    load();
  }

  function row(s) {
    const link = `#/p/${encodeURIComponent(api.project)}/stacks/` +
                 `${encodeURIComponent(s.stack_name)}/${s.id}`;
    return h('tr', {dataset: {stack: s.stack_name}},
      h('td', {}, h('a', {href: link}, s.stack_name)),
      h('td', {title: s.stack_status_reason || ''}, badge(s.stack_status)),
      h('td', {}, time(s.creation_time)), h('td', {}, time(s.updated_time)),
      described ? h('td', {class: 'muted'}, s.description || '') : null);
  }

  function columns() {
    return COLUMNS.length + (described ? 1 : 0);
  }

  clear(view,
    h('div', {class: 'title-row'}, h('h1', {}, 'Stacks'),
      h('a', {class: 'button primary', href: `#/p/${encodeURIComponent(api.project)}/launch`},
        'Launch stack')),
    search,
    h('table', {class: 'list stacks'}, head, body),
    h('div', {class: 'row pager'}, prev, next, info));
  load();
}
