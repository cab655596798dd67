// Reads a stack's live event stream (GET .../events?stream=true, server-sent events)
// with fetch, so that it sends the same authentication headers as every other call
// (a browser's EventSource cannot). Reconnects after a dropped connection, resuming
// after the last event received (Last-Event-ID).
import { auth } from './auth.js';

export function followEvents(url, onEvent, {onEnd, onState} = {}) {
  const controller = new AbortController();
  let lastId = null;
  let retry = 2000;
  let stopped = false;

  async function connect() {
    while (!stopped) {
      try {
        const headers = {Accept: 'text/event-stream', ...auth.headers()};
        if (lastId) headers['Last-Event-ID'] = lastId;
        const response = await fetch(url, {headers, signal: controller.signal});
        if (!response.ok) { onState && onState('error'); return; }
        onState && onState('live');
        const ended = await read(response.body.getReader());
        if (ended) { onEnd && onEnd(); return; }
      } catch (err) {
        if (stopped) return;
      }
      onState && onState('reconnecting');
      await new Promise(resolve => setTimeout(resolve, retry));
    }
  }

  async function read(reader) {
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, {stream: true});
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
        if (dispatch(block)) return true;
      }
    }
  }

  function dispatch(block) {
    let event = 'message', id = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (!line || line.startsWith(':')) continue;
      const at = line.indexOf(':');
      const name = at < 0 ? line : line.slice(0, at);
      let value = at < 0 ? '' : line.slice(at + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (name === 'event') event = value;
      else if (name === 'data') data.push(value);
      else if (name === 'id') id = value;
      else if (name === 'retry' && /^\d+$/.test(value)) retry = Number(value);
    }
    if (id) lastId = id;
    if (event === 'end') return true;
    if (event === 'event' && data.length) onEvent(JSON.parse(data.join('\n')));
    return false;
  }

  connect();
  return () => { stopped = true; controller.abort(); };
}
