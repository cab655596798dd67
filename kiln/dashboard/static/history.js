// A stack's history: every version (template, environment, parameters) it has had, and
// going back to one, made as a change set first so that it is reviewed before it runs.
import { h, clear, time, toast } from './dom.js';
import { changeSetHash } from './changesets.js';

export async function historyPane(pane, api, stackName, stackId) {
  const path = `/stacks/${encodeURIComponent(stackName)}/${stackId}`;
  try {
    const versions = (await api.get(`${path}/versions`)).versions || [];
    clear(pane, versions.length ? h('table', {class: 'list', id: 'history'},
      h('thead', {}, h('tr', {}, ['Version', 'Action', 'When', ''].map(t => h('th', {}, t)))),
      h('tbody', {}, versions.map(v => h('tr', {dataset: {version: v.version}},
        h('td', {}, String(v.version)), h('td', {}, v.action), h('td', {}, time(v.created_at)),
        h('td', {}, h('button', {type: 'button', name: 'restore', onclick: async () => {
          const name = prompt(`Name of the change set going back to version ${v.version}`,
                              `back-to-${v.version}`);
          if (!name) return;
          try {
            const made = (await api.post(`${path}/versions/${v.version}/changeset`,
                                         {name})).changeset;
            location.hash = changeSetHash(api.project, stackName, stackId, made.id);
          } catch (err) { toast(err.message, 'error'); }
        }}, 'Restore as change set'))))))
      : h('p', {class: 'muted'}, 'No versions kept.'));
  } catch (err) {
    clear(pane, h('p', {class: 'form-error'}, err.message));
  }
}
