// A stack's history: every version (template, environment, parameters) it has had, two
// of them compared side by side as the API's diff (hidden values arrive masked), and
// going back to one, made as a change set first so that it is reviewed before it runs.
import { h, clear, time, toast } from './dom.js';
import { changeSetHash } from './changesets.js';

/** One line of a unified diff, classed by what it is (added, removed, a hunk header). */
function diffLine(line) {
  const kind = line.startsWith('+++') || line.startsWith('---') ? 'file'
    : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add'
      : line.startsWith('-') ? 'del' : 'same';
  return h('span', {class: `diff-${kind}`}, line + '\n');
}

/** Two version pickers and the diff between them (GET .../versions/{to}/diff?from=). */
function comparer(api, path, numbers) {
  const pick = (name, chosen) => {
    const select = h('select', {name}, numbers.map(n => h('option', {value: String(n)},
                                                          `version ${n}`)));
    select.value = String(chosen);
    return select;
  };
  const newest = numbers[numbers.length - 1];
  const from = pick('diff_from', numbers.length > 1 ? numbers[numbers.length - 2] : newest);
  const to = pick('diff_to', newest);
  const out = h('div', {id: 'version-diff-box'});
  const compare = h('button', {type: 'button', name: 'compare', onclick: async () => {
    clear(out, h('p', {class: 'muted'}, 'Comparing…'));
    try {
      const shown = await api.get(`${path}/versions/${to.value}/diff`, {from: from.value});
      clear(out, shown.diff
        ? h('pre', {class: 'code diff', id: 'version-diff',
                    dataset: {from: String(shown.from), to: String(shown.to)}},
            shown.diff.replace(/\n$/, '').split('\n').map(diffLine))
        : h('p', {class: 'muted', id: 'version-diff'},
            `Versions ${shown.from} and ${shown.to} are the same.`));
    } catch (err) {
      clear(out, h('p', {class: 'form-error'}, err.message));
    }
  }}, 'Compare');
  return h('div', {class: 'compare'},
    h('div', {class: 'row'}, h('label', {}, 'Compare ', from), h('label', {}, ' with ', to),
      compare, h('span', {class: 'muted'},
                 'template, environment and parameters; hidden values are masked')),
    out);
}

export async function historyPane(pane, api, stackName, stackId) {
  const path = `/stacks/${encodeURIComponent(stackName)}/${stackId}`;
  try {
    const versions = (await api.get(`${path}/versions`)).versions || [];
    const numbers = versions.map(v => Number(v.version)).sort((a, b) => a - b);
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
      : h('p', {class: 'muted'}, 'No versions kept.'),
      versions.length > 1 ? comparer(api, path, numbers) : null);
  } catch (err) {
    clear(pane, h('p', {class: 'form-error'}, err.message));
  }
}
