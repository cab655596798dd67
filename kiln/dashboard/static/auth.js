// How the dashboard authenticates its API calls. GET /dashboard/session says which login
// this Kiln has:
//   - none (no-auth mode): the project is part of every URL and may be switched freely;
//   - keystone: a login form (user, password, domain, project) posted to
//     /dashboard/session, which asks Keystone for a project-scoped token and hands it
//     back; every API call and the event stream then send it as X-Auth-Token. Switching
//     project re-scopes the token to another project the user has a role on (the list
//     comes from Keystone); a 401 (an expired token) shows the form again.
// The token is kept in sessionStorage: it lives as long as the tab, never in a cookie.
// api.js and stream.js ask only this module for headers.
import { h, clear } from './dom.js';

const KEY = 'kiln.session';
let kind = 'none';
let session = null;
let pending = null;     // the login in progress (several 401s wait for the same one)

function load() {
  try { session = JSON.parse(sessionStorage.getItem(KEY) || 'null'); } catch { session = null; }
  if (session && session.expires_at && Date.parse(session.expires_at) <= Date.now()) {
    session = null;
  }
}

function keep(reply) {
  session = reply;
  sessionStorage.setItem(KEY, JSON.stringify(reply));
}

async function post(body) {
  const response = await fetch('/dashboard/session', {
    method: 'POST', headers: {'Content-Type': 'application/json', Accept: 'application/json'},
    body: JSON.stringify(body)});
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) {
    const message = (data && data.error && data.error.message) || `HTTP ${response.status}`;
    throw new Error(message);
  }
  return data;
}

function loginForm(reason) {
  // a dialog over the page; resolves when Keystone accepted the credentials
  return new Promise(resolve => {
    const error = h('p', {class: 'form-error', id: 'login-error'}, reason || '');
    const field = (label, name, attrs = {}) => h('label', {}, label,
      h('input', {name, autocomplete: name === 'password' ? 'current-password' : 'on', ...attrs}));
    const last = (() => { try { return JSON.parse(localStorage.getItem('kiln.login') || '{}'); }
                          catch { return {}; } })();
    const form = h('form', {class: 'login', id: 'login'},
      h('h2', {}, 'Log in'),
      field('User', 'username', {value: last.username || '', required: true}),
      field('Password', 'password', {type: 'password', required: true}),
      field('Project', 'project_name', {value: last.project_name || '', required: true}),
      field('Domain', 'user_domain_name', {value: last.user_domain_name || 'Default'}),
      error,
      h('button', {type: 'submit', name: 'login'}, 'Log in'));
    const dialog = h('div', {class: 'login-backdrop'}, form);
    form.addEventListener('submit', async e => {
      e.preventDefault();
      const data = Object.fromEntries(new FormData(form).entries());
      data.project_domain_name = data.user_domain_name;
      error.textContent = '';
      try {
        keep(await post(data));
        localStorage.setItem('kiln.login', JSON.stringify(
          {username: data.username, project_name: data.project_name,
           user_domain_name: data.user_domain_name}));
        dialog.remove();
        resolve();
      } catch (err) {
        error.textContent = err.message;
      }
    });
    document.body.append(dialog);
    form.querySelector('input[name=username]').focus();
  });
}

export const auth = {
  get kind() { return kind; },

  /** Find out which login this Kiln has; with Keystone, log in if not yet. */
  async init() {
    try {
      const response = await fetch('/dashboard/session', {headers: {Accept: 'application/json'}});
      kind = response.ok ? (await response.json()).auth : 'none';
    } catch { kind = 'none'; }
    if (kind !== 'keystone') return;
    load();
    if (!session) await this.login();
  },

  /** Headers to send with every API request. */
  headers() {
    return kind === 'keystone' && session ? {'X-Auth-Token': session.token} : {};
  },

  /** The project to show when the address names none. */
  defaultProject() { return session ? session.project.id : null; },

  /** The projects the user may switch to (null: any, as with no authentication). */
  projects() { return kind === 'keystone' && session ? session.projects : null; },

  /** Make ``project`` the current one: with Keystone, re-scope the token to it (only
   * to a project the user has a role on). */
  async useProject(project) {
    if (kind !== 'keystone' || !session || session.project.id === project) return;
    if (!session.projects.some(p => p.id === project)) {
      throw new Error(`You have no role on project ${project}.`);
    }
    keep(await post({token: session.token, project_id: project}));
  },

  /** Called when the API answers 401; resolves once new credentials are in place. */
  async login(reason) {
    if (kind !== 'keystone') throw new Error('This Kiln has no authentication configured.');
    if (!pending) {
      sessionStorage.removeItem(KEY);
      session = null;
      pending = loginForm(reason).finally(() => { pending = null; });
    }
    return pending;
  },

  logout() {
    sessionStorage.removeItem(KEY);
    session = null;
    location.reload();
  },

  /** What the header shows about the signed-in user. */
  render(box) {
    if (kind !== 'keystone') { clear(box, 'no authentication'); return; }
    if (!session) { clear(box); return; }
    clear(box, h('span', {id: 'user'}, session.user), ' ',
      h('button', {type: 'button', class: 'link', name: 'logout', onclick: () => this.logout()},
        'Log out'));
  },
};
