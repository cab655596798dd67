// Calls to Kiln's native API (Heat's Orchestration API v1) for one project.
import { auth } from './auth.js';

export class ApiError extends Error {
  constructor(status, body, fallback) {
    const err = body && body.error;
    super((err && err.message) || (body && body.explanation) || fallback || `HTTP ${status}`);
    this.status = status;
    this.type = err && err.type;
    this.body = body;
  }
}

export class Api {
  constructor(project) {
    this.project = project;
    this.base = `/v1/${encodeURIComponent(project)}`;
  }

  url(path, query) {
    let url = path.startsWith('/v1/') ? path : this.base + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null || v === '') continue;
        for (const item of Array.isArray(v) ? v : [v]) q.append(k, item);
      }
      const text = q.toString();
      if (text) url += (url.includes('?') ? '&' : '?') + text;
    }
    return url;
  }

  async call(method, path, {query, body} = {}) {
    const headers = {Accept: 'application/json', ...auth.headers()};
    const init = {method, headers};
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response = await fetch(this.url(path, query), init);
    if (response.status === 401) {
      await auth.login();
      response = await fetch(this.url(path, query),
                             {...init, headers: {...headers, ...auth.headers()}});
    }
    const text = await response.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = text; }
    }
    if (!response.ok) throw new ApiError(response.status, data, response.statusText);
    return data;
  }

  get(path, query) { return this.call('GET', path, {query}); }
  post(path, body, query) { return this.call('POST', path, {body, query}); }
  put(path, body) { return this.call('PUT', path, {body}); }
  patch(path, body) { return this.call('PATCH', path, {body}); }
  del(path) { return this.call('DELETE', path); }

  /** `/stacks/<name>/<id>` of a stack. */
  static stackPath(stack) { return `/stacks/${encodeURIComponent(stack.stack_name)}/${stack.id}`; }

  /** The path below /v1/<project> of a link href (nested stacks, events). */
  static linkPath(href) {
    const at = href.indexOf('/v1/');
    const rest = href.slice(at + 4);
    return rest.slice(rest.indexOf('/'));
  }
}
