// Change sets: an update's plan stored on the server, opened by anyone at its own link
// (#/p/<project>/stacks/<name>/<id>/changesets/<cs>), executed exactly as shown or
// deleted. The values shown are the API's: hidden parameters arrive already masked.
import { h, clear, badge, time, pretty, toast } from './dom.js';

/** The dashboard's address of a change set (what a reviewer is sent). */
export function changeSetHash(project, stackName, stackId, csId) {
  return `#/p/${encodeURIComponent(project)}/stacks/${encodeURIComponent(stackName)}/` +
    `${stackId}/changesets/${encodeURIComponent(csId)}`;
}

function csPath(stackName, stackId, csId) {
  return `/stacks/${encodeURIComponent(stackName)}/${stackId}/changesets` +
    (csId ? `/${encodeURIComponent(csId)}` : '');
}

/** Store an update's request body as a change set named *name*. */
export async function saveChangeSet(api, stack, body, name) {
  const made = await api.post(csPath(stack.stack_name, stack.id), {...body, name});
  return made.changeset;
}

const value = v => (v === undefined || v === null) ? '—' : h('code', {}, pretty(v));

/** A nested stack's change set, read under the stack the page is for (the server finds
 * a nested change set under any stack above it), shown below its resource's row. */
async function nestedRows(ctx, csId) {
  const child = (await ctx.api.get(csPath(ctx.stackName, ctx.stackId, csId))).changeset;
  const params = Object.entries(child.parameters || {}).filter(([k]) => !k.startsWith('OS::'));
  return h('div', {class: 'nested-changeset', dataset: {changeset: child.name}},
    h('p', {class: 'nested-head'}, 'Stack ', h('b', {class: 'nested-stack'}, child.stack_name),
      ` (${child.change_type === 'CREATE' ? 'to be created' : 'updated'}) · change set `,
      h('a', {href: changeSetHash(ctx.api.project, ctx.stackName, ctx.stackId, child.id)},
        child.name)),
    params.length ? h('p', {class: 'muted nested-parameters'}, 'Parameters: ',
      params.map(([k, v], i) => [i ? ', ' : '', h('b', {}, k), ' = ', h('code', {}, pretty(v))]))
      : null,
    changeRows(child.changes || [], ctx));
}

function nestedToggle(ctx, c) {
  let shown = null;
  const button = h('button', {type: 'button', class: 'nested-toggle', name: 'nested',
                              'aria-expanded': 'false'}, 'Nested changes ▸');
  button.addEventListener('click', async () => {
    const row = button.closest('tr');
    if (shown) {
      shown.hidden = !shown.hidden;
    } else {
      button.disabled = true;
      let body;
      try {
        body = await nestedRows(ctx, c.change_set_id);
      } catch (err) {
        body = h('p', {class: 'form-error'}, err.message);
      } finally {
        button.disabled = false;
      }
      shown = h('tr', {class: 'nested-changes', dataset: {parent: c.logical_resource_id}},
        h('td', {colspan: 5}, body));
      row.after(shown);
    }
    button.setAttribute('aria-expanded', String(!shown.hidden));
    button.textContent = shown.hidden ? 'Nested changes ▸' : 'Nested changes ▾';
  });
  return button;
}

function changeRows(changes, ctx, top = false) {
  if (!changes.length) return h('p', {class: 'muted'}, 'No changes.');
  return h('table', {class: top ? 'list changes' : 'list changes nested', id: top ? 'changes' : null},
    h('thead', {}, h('tr', {}, ['Action', 'Resource', 'Type', 'Replacement', 'Properties']
      .map(t => h('th', {}, t)))),
    h('tbody', {}, changes.map(c => h('tr', {dataset: {resource: c.logical_resource_id,
                                                       action: c.action}},
      h('td', {}, h('span', {class: `badge change-${String(c.action).toLowerCase()}`},
                    c.action)),
      h('td', {}, c.logical_resource_id,
        c.physical_resource_id ? h('div', {class: 'mono muted'}, c.physical_resource_id) : null,
        c.change_set_id ? h('div', {}, nestedToggle(ctx, c)) : null),
      h('td', {}, c.resource_type || ''),
      h('td', {class: 'replacement'}, c.replacement || '—'),
      h('td', {}, (c.details || []).length ? h('ul', {class: 'details'},
        c.details.map(d => h('li', {dataset: {property: d.target?.name || ''}},
          h('b', {}, d.target?.name || d.target?.attribute || ''), ': ',
          value(d.before), ' → ', value(d.after),
          d.target?.requires_recreation === 'Always' ?
            h('span', {class: 'muted'}, ' (needs a new resource)') : null)))
        : h('span', {class: 'muted'}, c.action === 'Modify' ? (c.scope || []).join(', ') : ''))))));
}

/** The page of one change set: what it would change, and Execute / Delete. */
export async function changeSetPage(view, api, stackName, stackId, csId) {
  const stackHash = `#/p/${encodeURIComponent(api.project)}/stacks/` +
    `${encodeURIComponent(stackName)}/${stackId}`;
  clear(view, h('p', {class: 'muted'}, 'Loading…'));
  let cs;
  try {
    cs = (await api.get(csPath(stackName, stackId, csId))).changeset;
  } catch (err) {
    return clear(view, h('p', {class: 'form-error'}, err.message));
  }
  const link = new URL(changeSetHash(api.project, stackName, stackId, cs.id), location.href).href;
  const act = (label, attrs, fn) => h('button', {type: 'button', ...attrs, onclick: async () => {
    try { await fn(); } catch (err) { toast(err.message, 'error'); }
  }}, label);
  const root = cs.root_change_set;
  const available = cs.execution_status === 'AVAILABLE' && !root;
  const params = Object.entries(cs.parameters || {}).filter(([k]) => !k.startsWith('OS::'));
  clear(view,
    h('div', {class: 'title-row'}, h('h1', {},
      h('a', {href: stackHash}, stackName), ' / change set ', cs.name),
      h('span', {id: 'changeset-status'}, badge(cs.status)),
      h('span', {id: 'execution-status', class: 'badge'}, cs.execution_status)),
    h('p', {class: 'muted'}, cs.description ? `${cs.description} · ` : '', 'made ', time(cs.creation_time),
      cs.execution_time ? [' · executed ', time(cs.execution_time)] : ''),
    cs.status_reason ? h('p', {class: 'form-error', id: 'changeset-reason'}, cs.status_reason) : null,
    root ? h('p', {id: 'changeset-root'}, 'The change set of nested stack ',
      h('b', {}, cs.stack_name), ', part of ',
      h('a', {href: changeSetHash(api.project, stackName, stackId, root.id)}, root.name),
      ': it is executed (or deleted) with it.') : null,
    h('p', {}, 'Link for a reviewer: ',
      h('input', {id: 'changeset-link', readonly: true, size: 80, value: link})),
    h('div', {class: 'row actions'},
      available ? act('Execute', {name: 'execute', class: 'primary'}, async () => {
        if (!confirm(`Execute change set ${cs.name} on ${stackName}?`)) return;
        await api.post(`${csPath(stackName, stackId, cs.id)}/execute`);
        toast(`Executing ${cs.name}`);
        location.hash = stackHash;
      }) : null,
      root ? null : act('Delete', {name: 'delete-changeset', class: 'danger'}, async () => {
        if (!confirm(`Delete change set ${cs.name}?`)) return;
        await api.del(csPath(stackName, stackId, cs.id));
        toast(`Deleted change set ${cs.name}`);
        location.hash = `${stackHash}?tab=changesets`;
      })),
    h('h2', {}, 'Changes'), changeRows(cs.changes || [], {api, stackName, stackId}, true),
    params.length ? [h('h2', {}, 'Parameters'), h('table', {class: 'list', id: 'changeset-parameters'},
      h('tbody', {}, params.map(([k, v]) => h('tr', {dataset: {parameter: k}},
        h('td', {}, k), h('td', {class: 'mono'}, pretty(v))))))] : null);
  return null;
}

/** The "Change sets" tab of a stack: its change sets, each a link to its page. */
export async function changeSetsPane(pane, api, stackName, stackId) {
  try {
    const list = (await api.get(csPath(stackName, stackId))).changesets || [];
    clear(pane, list.length ? h('table', {class: 'list', id: 'changeset-list'},
      h('thead', {}, h('tr', {}, ['Name', 'Status', 'Execution', 'Made', 'Description']
        .map(t => h('th', {}, t)))),
      h('tbody', {}, list.map(cs => h('tr', {dataset: {changeset: cs.name}},
        h('td', {}, h('a', {href: changeSetHash(api.project, stackName, stackId, cs.id)}, cs.name)),
        h('td', {}, badge(cs.status)), h('td', {}, cs.execution_status),
        h('td', {}, time(cs.creation_time)), h('td', {class: 'muted'}, cs.description || '')))))
      : h('p', {class: 'muted'}, 'No change sets. Update the stack and save its preview as one.'));
  } catch (err) {
    clear(pane, h('p', {class: 'form-error'}, err.message));
  }
}
