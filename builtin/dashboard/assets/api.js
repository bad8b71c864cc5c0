// The API as the logged-in user: every call goes through the dashboard's
// same-origin proxy (/ui/api/…), which attaches the session's credential.

export const session = { user: '', groups: [], csrfToken: '' };

export const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

// APIError carries the Kubernetes Status of a refused request.
export class APIError extends Error {
  constructor(status) {
    super(status.message || status.reason || 'request failed');
    this.status = status;
    this.code = status.code;
    this.reason = status.reason;
  }
}

export async function loadSession() {
  const r = await fetch('/ui/session', { credentials: 'same-origin' });
  if (!r.ok) return false;
  Object.assign(session, await r.json());
  return true;
}

export async function logout() {
  await fetch('/ui/logout', { method: 'POST', headers: { 'X-CSRF-Token': session.csrfToken } });
}

function url(path, query) {
  const q = query ? new URLSearchParams(query).toString() : '';
  return (path.startsWith('/ui/') ? '' : '/ui/api') + path + (q ? (path.includes('?') ? '&' : '?') + q : '');
}

async function statusOf(r) {
  const text = await r.text();
  try {
    const s = JSON.parse(text);
    if (s && s.kind === 'Status') return s;
  } catch { /* not JSON */ }
  return { message: text.trim() || r.statusText, code: r.status };
}

// request performs one API call and returns the decoded answer (text for
// non-JSON answers); a refusal throws an APIError with the server's words.
export async function request(method, path, opts = {}) {
  const headers = { Accept: opts.accept || 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = session.csrfToken;
  let body;
  if (opts.body !== undefined) {
    headers['Content-Type'] = opts.contentType || 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  const r = await fetch(url(path, opts.query), { method, headers, body, signal: opts.signal });
  if (r.status === 401) location.reload();
  if (!r.ok) throw new APIError(await statusOf(r));
  const ct = r.headers.get('Content-Type') || '';
  if (r.status === 204) return null;
  return ct.includes('json') ? r.json() : r.text();
}

// stream calls onChunk with each piece of text of a streaming answer (a
// watch, followed logs) until it ends or signal aborts.
export async function stream(path, query, onChunk, { signal, accept } = {}) {
  const r = await fetch(url(path, query), { headers: { Accept: accept || 'application/json' }, signal });
  if (!r.ok) throw new APIError(await statusOf(r));
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onChunk(dec.decode(value, { stream: true }));
  }
}

// can asks the server (SelfSubjectAccessReview) whether the user may do verb
// on resource; answers are kept for the session.
const reviews = new Map();
export const reviewListeners = new Set();
export function can(verb, group, resource, namespace, subresource) {
  const key = [verb, group, resource, subresource || '', namespace || ''].join('|');
  const got = reviews.get(key);
  if (got && got !== 'pending') return got;
  if (!got) {
    reviews.set(key, 'pending');
    request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb, group, resource, subresource, namespace } },
      },
    }).then((r) => reviews.set(key, { allowed: !!r.status.allowed }), () => reviews.set(key, { allowed: false }))
      .then(() => reviewListeners.forEach((f) => f()));
  }
  return undefined;
}
