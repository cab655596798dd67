// Launch and update: the template and environment inputs, the parameter form generated
// from POST /validate (types, constraints, defaults, hidden, parameter_groups), checks
// before submit with each error shown at its place, and the update preview.
import { Api, ApiError } from './api.js';
import { saveChangeSet, changeSetHash } from './changesets.js';
import { h, clear, toast, badge } from './dom.js';

/** The template/environment/files part of the page; `body()` gives the API fields. */
export class Sources {
  constructor({template = '', templateUrl = ''} = {}) {
    this.text = h('textarea', {name: 'template', rows: 14, spellcheck: 'false',
                               placeholder: 'heat_template_version: 2021-04-16\nresources: …',
                               value: template});
    this.url = h('input', {name: 'template_url', type: 'url', size: 60, value: templateUrl,
                           placeholder: 'https://… (instead of the text above)'});
    this.file = h('input', {type: 'file', name: 'template_file', onchange: async () => {
      const f = this.file.files[0];
      if (f) { this.text.value = await f.text(); this.templateName = f.name; }
    }});
    this.envFiles = h('input', {type: 'file', name: 'environment_files', multiple: true});
    this.envText = h('textarea', {name: 'environment', rows: 4, spellcheck: 'false',
                                  placeholder: 'parameter_defaults: …  (optional)'});
    this.otherFiles = h('input', {type: 'file', name: 'files', multiple: true});
    this.error = h('div', {class: 'field-error', 'data-for': 'template'});
    // Kiln's warnings on a template Heat accepts (a map spelt like a function: get_parm)
    this.warning = h('div', {class: 'field-warning', 'data-for': 'template-warnings'});
    this.el = h('fieldset', {class: 'sources'},
      h('legend', {}, 'Template'),
      h('label', {}, 'Paste the template, or load a file: ', this.file), this.text,
      h('label', {}, 'Or a template URL ', this.url), this.error, this.warning,
      h('details', {open: false},
        h('summary', {}, 'Environment and other files'),
        h('label', {}, 'Environment files (merged in this order) ', this.envFiles),
        h('label', {}, 'Environment (pasted, applied last)'), this.envText,
        h('label', {}, 'Files the template refers to (get_file, provider templates) ',
          this.otherFiles)));
  }

  async body() {
    const out = {files: {}, environment_files: []};
    if (this.url.value.trim()) out.template_url = this.url.value.trim();
    else out.template = this.text.value;
    for (const f of this.otherFiles.files) out.files[f.name] = await f.text();
    for (const f of this.envFiles.files) {
      out.files[f.name] = await f.text();
      out.environment_files.push(f.name);
    }
    if (this.envText.value.trim()) {
      out.files['dashboard-environment.yaml'] = this.envText.value;
      out.environment_files.push('dashboard-environment.yaml');
    }
    if (!out.environment_files.length) delete out.environment_files;
    return out;
  }

  showError(text) { this.error.textContent = text || ''; }

  showWarnings(warnings) {
    this.warning.textContent = (warnings || []).map(w => `Warning: ${w}`).join('\n');
  }
}

/** Every error of a /validate?all_errors=true answer, each with Kiln's hint under it
 *  (a template loaded from a file is named by that file instead of "template"). */
export function describeErrors(err, templateName) {
  const fault = (err.body && err.body.error) || {};
  const found = Array.isArray(fault.errors) && fault.errors.length ? fault.errors
    : [{message: err.message, hint: fault.hint}];
  const named = hint => (templateName && hint && hint.startsWith('template, ')
    ? templateName + hint.slice('template'.length) : hint);
  return found.map(e => e.hint ? `${e.message}\n  hint: ${named(e.hint)}` : e.message)
    .join('\n');
}

/** How the API shows a hidden parameter's value: never a value to send back. */
export const MASK = '******';

/** The parameter form built from a validate answer. *held* names the parameters the
 *  stack already has a value for: a hidden one among them arrives masked, so its field
 *  starts empty and, left empty, is left out of the request (the stack keeps its value). */
export class ParameterForm {
  constructor(validated, values = {}, held = new Set()) {
    this.params = validated.Parameters || {};
    this.held = held;
    this.inputs = new Map();
    this.errors = new Map();
    this.el = h('div', {class: 'params'});
    const grouped = new Set();
    for (const group of validated.ParameterGroups || []) {
      const names = (group.parameters || []).filter(n => n in this.params);
      names.forEach(n => grouped.add(n));
      this.el.append(h('fieldset', {class: 'param-group'},
        h('legend', {}, group.label || 'Parameters'),
        group.description ? h('p', {class: 'muted'}, group.description) : null,
        names.map(n => this.field(n, values))));
    }
    const rest = Object.keys(this.params).filter(n => !grouped.has(n));
    if (rest.length) {
      this.el.append(h('fieldset', {class: 'param-group'}, h('legend', {}, 'Parameters'),
                       rest.map(n => this.field(n, values))));
    }
    if (!Object.keys(this.params).length) this.el.append(h('p', {class: 'muted'},
                                                          'This template has no parameters.'));
  }

  field(name, values) {
    const p = this.params[name];
    const hidden = String(p.NoEcho) === 'true';
    const given = name in values ? values[name] : p.Default;
    const type = String(p.Type || 'String');
    let input;
    if (hidden && this.held.has(name) && String(values[name]) === MASK) {
      input = h('input', {type: 'password', autocomplete: 'new-password', value: '',
                          placeholder: 'The current value is kept unless you type a new one',
                          dataset: {kept: 'true'}});
    } else if (Array.isArray(p.AllowedValues) && p.AllowedValues.length) {
      input = h('select', {}, p.Default === undefined ? h('option', {value: ''}, '') : null,
                p.AllowedValues.map(v => h('option', {value: String(v)}, String(v))));
      if (given !== undefined) input.value = String(given);
    } else if (type === 'Boolean') {
      input = h('select', {}, h('option', {value: 'true'}, 'true'),
                h('option', {value: 'false'}, 'false'));
      input.value = String(given ?? 'false');
    } else if (type === 'Json') {
      input = h('textarea', {rows: 3, spellcheck: 'false',
                             value: given === undefined ? '' :
                               typeof given === 'string' ? given : JSON.stringify(given)});
    } else {
      input = h('input', {type: hidden ? 'password' : type === 'Number' ? 'number' : 'text',
                          step: type === 'Number' ? 'any' : undefined,
                          min: p.MinValue, max: p.MaxValue, autocomplete: 'off',
                          value: given === undefined ? '' :
                            Array.isArray(given) ? given.join(',') : String(given)});
    }
    input.name = name;
    input.id = `param-${name}`;
    this.inputs.set(name, input);
    const error = h('div', {class: 'field-error', 'data-for': name});
    this.errors.set(name, error);
    const hints = [];
    if (type === 'CommaDelimitedList') hints.push('comma-separated list');
    if (p.MinLength !== undefined || p.MaxLength !== undefined) {
      hints.push(`length ${p.MinLength ?? 0}–${p.MaxLength ?? '∞'}`);
    }
    if (p.MinValue !== undefined || p.MaxValue !== undefined) {
      hints.push(`range ${p.MinValue ?? '−∞'}–${p.MaxValue ?? '∞'}`);
    }
    if (p.AllowedPattern) hints.push(`pattern ${p.AllowedPattern}`);
    if (p.CustomConstraint) hints.push(`checked as ${p.CustomConstraint}`);
    if (p.ConstraintDescription) hints.push(p.ConstraintDescription);
    return h('div', {class: 'param', dataset: {param: name}},
      h('label', {for: input.id}, p.Label || name,
        h('span', {class: 'type'}, ` ${type}${hidden ? ', hidden' : ''}`)),
      input,
      p.Description ? h('div', {class: 'muted'}, p.Description) : null,
      hints.length ? h('div', {class: 'hint'}, hints.join(' · ')) : null,
      error);
  }

  values() {
    const out = {};
    for (const [name, input] of this.inputs) {
      if (this.keeps(input)) continue;
      if (input.value === '' && this.params[name].Default !== undefined) continue;
      out[name] = input.value;
    }
    return out;
  }

  /** A hidden field left empty whose stack value the server keeps. */
  keeps(input) { return input.dataset.kept === 'true' && input.value === ''; }

  /** The names of the hidden parameters left untouched (not in `values()`). */
  kept() { return [...this.inputs].filter(([, i]) => this.keeps(i)).map(([n]) => n); }

  /** The names left empty that go back to their default (omitted from `values()`). */
  defaulted() {
    return [...this.inputs].filter(([n, i]) => !this.keeps(i) && i.value === '' &&
                                               this.params[n].Default !== undefined)
      .map(([n]) => n);
  }

  clearErrors() { for (const e of this.errors.values()) e.textContent = ''; }

  /** Checks that need no server; true when all pass. */
  check() {
    this.clearErrors();
    let ok = true;
    for (const [name, input] of this.inputs) {
      const p = this.params[name];
      const v = input.value;
      let problem = '';
      if (this.keeps(input)) continue;
      if (v === '' && p.Default === undefined) problem = 'A value is required.';
      else if (v !== '') {
        if (p.Type === 'Number' && isNaN(Number(v))) problem = 'Must be a number.';
        else if (p.Type === 'Number' && p.MinValue !== undefined && Number(v) < p.MinValue) {
          problem = p.ConstraintDescription || `Must be at least ${p.MinValue}.`;
        } else if (p.Type === 'Number' && p.MaxValue !== undefined && Number(v) > p.MaxValue) {
          problem = p.ConstraintDescription || `Must be at most ${p.MaxValue}.`;
        } else if (p.MinLength !== undefined && v.length < p.MinLength) {
          problem = p.ConstraintDescription || `At least ${p.MinLength} characters.`;
        } else if (p.MaxLength !== undefined && v.length > p.MaxLength) {
          problem = p.ConstraintDescription || `At most ${p.MaxLength} characters.`;
        } else if (p.Type === 'Json') {
          try { JSON.parse(v); } catch { problem = 'Must be JSON.'; }
        } else if (p.AllowedPattern) {
          try {
            if (!new RegExp(`^(?:${p.AllowedPattern})$`).test(v)) {
              problem = p.ConstraintDescription || `Must match ${p.AllowedPattern}.`;
            }
          } catch { /* a pattern JavaScript cannot read: the server checks it */ }
        }
      }
      if (problem) { this.errors.get(name).textContent = problem; ok = false; }
    }
    return ok;
  }

  /** Put a server error next to the parameter it names; false if it names none. */
  place(message) {
    for (const name of this.inputs.keys()) {
      const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const named = new RegExp(`(['"(]${esc}['")])|parameters\\.${esc}\\b|Parameter ${esc}\\b`);
      if (named.test(message)) {
        this.errors.get(name).textContent = message;
        this.inputs.get(name).focus();
        return true;
      }
    }
    return false;
  }
}

/** The launch (create) and update pages. */
export function stackForm(view, api, {stack = null, go}) {
  const updating = Boolean(stack);
  const sources = new Sources();
  const name = h('input', {name: 'stack_name', required: true, size: 30,
                           value: stack ? stack.stack_name : '', disabled: updating});
  const timeout = h('input', {name: 'timeout_mins', type: 'number', min: 1, size: 5,
                              value: stack && stack.timeout_mins ? stack.timeout_mins : ''});
  const rollback = h('input', {name: 'rollback', type: 'checkbox',
                               checked: stack ? !stack.disable_rollback : false});
  const tags = h('input', {name: 'tags', size: 30, value: stack && stack.tags ?
                                                       stack.tags.join(',') : ''});
  const nameError = h('div', {class: 'field-error', 'data-for': 'stack_name'});
  const paramsBox = h('div', {class: 'params-box'});
  const generalError = h('div', {class: 'form-error', role: 'alert'});
  const previewBox = h('div', {class: 'preview'});
  let form = null;
  let currentValues = stack ? {...(stack.parameters || {})} : {};
  for (const k of Object.keys(currentValues)) if (k.startsWith('OS::')) delete currentValues[k];
  const held = new Set(Object.keys(currentValues));

  const loadParams = h('button', {type: 'button', onclick: () => loadParameters()},
                       'Load parameters');
  const previewBtn = h('button', {type: 'button', class: 'primary', name: 'preview',
                                  onclick: () => preview()},
                       updating ? 'Preview update' : 'Preview');
  const submitBtn = h('button', {type: 'button', class: 'primary', name: 'submit',
                                 disabled: updating, onclick: () => submit()},
                      updating ? 'Confirm update' : 'Launch');

  async function loadParameters() {
    sources.showError(''); sources.showWarnings([]); generalError.textContent = '';
    try {
      const body = await sources.body();
      // all_errors (Kiln only): every resource's error, and warnings, not just Heat's one
      const validated = await api.post('/validate', body, {all_errors: 'true'});
      sources.showWarnings(validated.Warnings);
      delete validated.Warnings;
      if (form) currentValues = {...currentValues, ...form.values()};
      form = new ParameterForm(validated, currentValues, held);
      clear(paramsBox, form.el);
      return true;
    } catch (err) {
      sources.showError(describeErrors(err, sources.templateName));
      const fault = (err.body && err.body.error) || {};
      sources.showWarnings(fault.warnings);
      return false;
    }
  }

  async function requestBody() {
    const body = await sources.body();
    body.parameters = form ? form.values() : {};
    if (updating && form && form.kept().length) {
      // An untouched hidden field is left out, and a PUT would give it its default (or
      // refuse it): Heat's PATCH ("existing") keeps the stack's value for what is left
      // out. Fields emptied to their default are named, as a PUT would reset them.
      body.existing = true;
      const defaulted = form.defaulted();
      if (defaulted.length) body.clear_parameters = defaulted;
    }
    if (timeout.value) body.timeout_mins = Number(timeout.value);
    body.disable_rollback = !rollback.checked;
    if (tags.value.trim()) body.tags = tags.value.trim();
    if (!updating) body.stack_name = name.value.trim();
    return body;
  }

  function showServerError(err) {
    const message = err.message;
    if (form && form.place(message)) return;
    if (/stack_name|stack name/i.test(message) && !updating) {
      nameError.textContent = message; return;
    }
    if (/template|resources\.|outputs\.|line \d+/i.test(message)) {
      sources.showError(message); return;
    }
    generalError.textContent = message;
  }

  async function checked() {
    generalError.textContent = ''; nameError.textContent = ''; sources.showError('');
    if (!updating && !name.value.trim()) { nameError.textContent = 'A name is required.'; return null; }
    if (!form && !(await loadParameters())) return null;
    if (!form.check()) return null;
    return requestBody();
  }

  async function preview() {
    const body = await checked();
    if (!body) return;
    clear(previewBox, h('p', {class: 'muted'}, 'Checking…'));
    try {
      if (updating) {
        const at = `${Api.stackPath(stack)}/preview`;
        const result = await (body.existing ? api.patch(at, body) : api.put(at, body));
        showChanges(result.resource_changes || {});
        previewBox.append(saveRow());
        submitBtn.disabled = false;
      } else {
        const result = await api.post('/stacks/preview', body);
        const resources = flatten(result.stack.resources || []);
        clear(previewBox, h('h3', {}, `Would create ${resources.length} resources`),
              h('ul', {class: 'changes'}, resources.map(r =>
                h('li', {}, h('b', {}, r.resource_name), ' ', r.resource_type))));
      }
    } catch (err) {
      clear(previewBox);
      showServerError(err);
    }
  }

  function showChanges(changes) {
    const kinds = [['added', 'Added'], ['updated', 'Updated in place'],
                   ['replaced', 'Replaced'], ['deleted', 'Deleted'],
                   ['unchanged', 'Unchanged']];
    clear(previewBox, h('h3', {}, 'What the update will do'),
      kinds.map(([key, label]) => {
        const items = changes[key] || [];
        return h('div', {class: `change-kind ${key}`, dataset: {kind: key}},
          h('h4', {}, `${label} (${items.length})`),
          h('ul', {}, items.map(r => h('li', {}, h('b', {}, r.resource_name), ' ',
                                          r.resource_type || ''))));
      }));
  }

  // the preview kept on the server, for a second person to review at its link and run
  function saveRow() {
    const csName = h('input', {name: 'changeset_name', size: 30,
      value: `update-${new Date().toISOString().slice(0, 19).replace(/[T:]/g, '-')}`});
    const save = h('button', {type: 'button', name: 'save_changeset', onclick: async () => {
      const body = await checked();
      if (!body || !csName.value.trim()) return;
      save.disabled = true;
      try {
        const made = await saveChangeSet(api, stack, nested.checked ?
          {...body, include_nested_stacks: true} : body, csName.value.trim());
        location.hash = changeSetHash(api.project, stack.stack_name, stack.id, made.id);
      } catch (err) { save.disabled = false; showServerError(err); }
    }}, 'Save as change set');
    const nested = h('input', {type: 'checkbox', name: 'include_nested'});
    return h('div', {class: 'row save-changeset'}, h('label', {}, 'Change set ', csName),
      h('label', {title: 'a change set of its own for each nested stack the update changes'},
        nested, ' with nested stacks'), save,
      h('span', {class: 'muted'}, 'stored for review; anyone with the link can execute it'));
  }

  async function submit() {
    const body = await checked();
    if (!body) return;
    submitBtn.disabled = true;
    try {
      if (updating) {
        const at = Api.stackPath(stack);
        await (body.existing ? api.patch(at, body) : api.put(at, body));
        toast(`Updating ${stack.stack_name}`);
        go(`stacks/${encodeURIComponent(stack.stack_name)}/${stack.id}`);
      } else {
        // the server checks everything a create would, without creating anything
        await api.post('/stacks/preview', body);
        const created = await api.post('/stacks', body);
        toast(`Launching ${body.stack_name}`);
        go(`stacks/${encodeURIComponent(body.stack_name)}/${created.stack.id}`);
      }
    } catch (err) {
      submitBtn.disabled = updating;
      showServerError(err);
    }
  }

  clear(view,
    h('h1', {}, updating ? `Update ${stack.stack_name}` : 'Launch a stack'),
    h('form', {class: 'stack-form', onsubmit: e => e.preventDefault()},
      h('fieldset', {}, h('legend', {}, 'Stack'),
        h('label', {}, 'Name ', name), nameError,
        h('label', {}, 'Timeout (minutes) ', timeout),
        h('label', {class: 'inline'}, rollback, ' Roll back on failure'),
        h('label', {}, 'Tags ', tags)),
      sources.el,
      h('div', {class: 'row'}, loadParams),
      paramsBox, generalError,
      h('div', {class: 'row'}, previewBtn, submitBtn,
        h('a', {href: updating ? `#/p/${encodeURIComponent(api.project)}/stacks/` +
                  `${encodeURIComponent(stack.stack_name)}/${stack.id}` :
                  `#/p/${encodeURIComponent(api.project)}/stacks`}, 'Cancel')),
      previewBox));

  if (updating) {
    Promise.all([api.get(`${Api.stackPath(stack)}/template`),
                 api.get(`${Api.stackPath(stack)}/environment`).catch(() => null),
                 api.get(`${Api.stackPath(stack)}/files`).catch(() => ({}))])
      .then(([template, environment, files]) => {
        sources.text.value = JSON.stringify(template, null, 2);
        if (environment && (environment.resource_registry || environment.parameter_defaults)) {
          const env = {...environment};
          delete env.parameters;
          sources.envText.value = JSON.stringify(env, null, 2);
        }
        sources.keptFiles = files || {};
        loadParameters();
      })
      .catch(err => { generalError.textContent = err.message; });
    const base = sources.body.bind(sources);
    sources.body = async () => {
      const out = await base();
      out.files = {...(sources.keptFiles || {}), ...out.files};
      return out;
    };
  }
}

function flatten(items) {
  const out = [];
  for (const item of items) {
    if (Array.isArray(item)) out.push(...flatten(item));
    else out.push(item);
  }
  return out;
}

export { badge, ApiError };
