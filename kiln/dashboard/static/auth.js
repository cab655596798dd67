// How the dashboard authenticates its API calls: the one place to change for Keystone.
//
// Today Kiln serves without authentication: the project is part of every URL and the
// caller may switch projects freely (as an admin may). A Keystone provider will:
//   - show a login form (username, password, domain, project) in #auth,
//   - POST /v3/auth/tokens to the identity endpoint and keep the token in memory,
//   - return {'X-Auth-Token': token} from headers(),
//   - list the user's projects for the project switcher (admins: all projects),
//   - call login() again when a request answers 401.
// api.js and stream.js ask only this module for headers, so nothing else changes.

export const auth = {
  kind: 'none',
  /** Headers to send with every API request. */
  headers() { return {}; },
  /** Whether the user may switch to any project (no-auth: yes). */
  canSwitchProject() { return true; },
  /** Called when the API answers 401; resolves once new credentials are in place. */
  async login() { throw new Error('This Kiln has no authentication configured.'); },
  /** What the header shows about the signed-in user. */
  label() { return 'no authentication'; },
};
