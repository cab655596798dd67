// The dashboard's entry point: a hash router over the pages, one project at a time.
//   #/p/<project>/stacks[?filters]            stack list
//   #/p/<project>/launch                      launch a stack
//   #/p/<project>/stacks/<name>/<id>[?tab=]   one stack
//   #/p/<project>/stacks/<name>/<id>/update   update it (with a preview)
//   #/p/<project>/stacks/<name>/<id>/changesets/<cs>   one change set (review, execute)
import { Api } from './api.js';
import { auth } from './auth.js';
import { h, clear } from './dom.js';
import { stackList } from './list.js';
import { stackPage } from './stack.js';
import { stackForm } from './form.js';
import { changeSetPage } from './changesets.js';

const view = document.getElementById('view');
const projectInput = document.getElementById('project');
const projectChoice = document.getElementById('project-choice');
let leaving = [];

function currentProject() {
  const m = /^#\/p\/([^/?]+)/.exec(location.hash);
  if (m) return decodeURIComponent(m[1]);
  return auth.defaultProject() || localStorage.getItem('kiln.project') || 'demo';
}

// With no authentication any project may be typed in; with Keystone the choice is the
// projects the user has a role on (by name; the address holds the id).
function renderProjects(project) {
  const mine = auth.projects();
  projectInput.hidden = !!mine;
  projectChoice.hidden = !mine;
  if (!mine) { projectInput.value = project; return; }
  clear(projectChoice, mine.map(p => h('option', {value: p.id}, p.name)));
  projectChoice.value = project;
}

function go(rest) {
  location.hash = `#/p/${encodeURIComponent(currentProject())}/${rest}`;
}

async function route() {
  for (const fn of leaving) fn();
  leaving = [];
  const project = currentProject();
  try {
    await auth.useProject(project);
  } catch (err) {
    renderProjects(auth.defaultProject());
    return clear(view, h('p', {class: 'form-error', id: 'project-error'}, err.message));
  }
  localStorage.setItem('kiln.project', project);
  renderProjects(project);
  auth.render(document.getElementById('auth'));
  const api = new Api(project);
  const [pathPart, queryPart] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(queryPart || '');
  const parts = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  clear(document.getElementById('nav'),
    h('a', {href: `#/p/${encodeURIComponent(project)}/stacks`}, 'Stacks'),
    h('a', {href: `#/p/${encodeURIComponent(project)}/launch`}, 'Launch'));
  const ctx = {go, onLeave: fn => leaving.push(fn)};
  if (parts[0] !== 'p' || parts.length < 3) { go('stacks'); return; }
  const [, , page, name, id, sub, item] = parts;
  if (page === 'launch') return stackForm(view, api, {go});
  if (page === 'stacks' && !name) return stackList(view, api, params, ctx);
  if (page === 'stacks' && id && sub === 'update') {
    clear(view, h('p', {class: 'muted'}, 'Loading…'));
    try {
      const stack = (await api.get(`/stacks/${encodeURIComponent(name)}/${id}`)).stack;
      return stackForm(view, api, {stack, go});
    } catch (err) {
      return clear(view, h('p', {class: 'form-error'}, err.message));
    }
  }
  if (page === 'stacks' && id && sub === 'changesets' && item) {
    return changeSetPage(view, api, name, id, item);
  }
  if (page === 'stacks' && id) return stackPage(view, api, name, id, params.get('tab'), ctx);
  clear(view, h('p', {}, 'Nothing here. ', h('a', {href: '#/'}, 'Stacks')));
}

projectInput.addEventListener('change', () => {
  const value = projectInput.value.trim();
  if (value) location.hash = `#/p/${encodeURIComponent(value)}/stacks`;
});
projectChoice.addEventListener('change', () => {
  location.hash = `#/p/${encodeURIComponent(projectChoice.value)}/stacks`;
});

let lastPage = null;
window.addEventListener('hashchange', () => {
  // switching tabs of the same stack keeps the page (and its stream)
  const [path, query] = location.hash.split('?');
  const tab = new URLSearchParams(query || '').get('tab');
  if (lastPage && lastPage.path === path && tab) { lastPage.page.select(tab); return; }
  render();
});

async function render() {
  const page = await route();
  lastPage = page && page.select ? {path: location.hash.split('?')[0], page} : null;
}

auth.init().then(render);
