// Live collections: one list then one watch per kind (and namespace scope) per
// tab, shared by every page that shows that kind. A watch that ends is resumed
// from the last resourceVersion; an expired one (410) relists.

import { stream, request, tableAccept } from './api.js';

const collections = new Map();
let scope = '';

// Collection is the live set of one resource's objects in one scope.
export class Collection {
  constructor(kind, namespace) {
    this.kind = kind;
    this.namespace = namespace;
    this.items = new Map();
    this.columns = null; // Table column definitions (table kinds)
    this.error = null;
    this.loaded = false;
    this.subs = new Set();
    this.ctrl = null;
    this.rv = '';
    this.pending = false;
  }

  get path() {
    const k = this.kind;
    return k.base + (k.namespaced && this.namespace ? `/namespaces/${encodeURIComponent(this.namespace)}` : '') + '/' + k.resource;
  }

  subscribe(fn) {
    this.subs.add(fn);
    if (!this.ctrl) this.start();
    return () => this.subs.delete(fn);
  }

  notify() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.subs.forEach((f) => f(this));
    });
  }

  stop() {
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = null;
  }

  key(obj) {
    const m = obj.metadata || {};
    return (m.namespace || '') + '/' + m.name;
  }

  async start() {
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    const accept = this.kind.table ? tableAccept : 'application/json';
    let relist = true;
    let delay = 500;
    while (!ctrl.signal.aborted) {
      try {
        if (relist) {
          // resourceVersion=0: served from the API server's watch cache, as informers list.
          const list = await request('GET', this.path, { accept, signal: ctrl.signal, query: { resourceVersion: '0' } });
          this.items = new Map();
          if (this.kind.table) {
            this.columns = list.columnDefinitions;
            for (const row of list.rows || []) this.items.set(this.key(row.object), row);
          } else {
            for (const o of list.items || []) this.items.set(this.key(o), o);
          }
          this.rv = list.metadata.resourceVersion;
          this.error = null;
          this.loaded = true;
          relist = false;
          this.notify();
        }
        let buf = '';
        let expired = false;
        await stream(this.path, { watch: '1', resourceVersion: this.rv, allowWatchBookmarks: 'true' }, (chunk) => {
          buf += chunk;
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (line && this.apply(JSON.parse(line))) expired = true;
          }
        }, { signal: ctrl.signal, accept });
        if (expired) relist = true;
        delay = 500;
      } catch (e) {
        if (ctrl.signal.aborted) return;
        if (e.code) {
          this.error = e;
          this.loaded = true;
          this.notify();
          if (e.code === 403 || e.code === 404) return; // RBAC or a missing API: nothing to retry
        }
        relist = true;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 10000);
      }
    }
  }

  // apply applies one watch event; it returns true when the watch expired.
  apply(ev) {
    const o = ev.object;
    if (ev.type === 'ERROR') return true;
    if (ev.type === 'BOOKMARK') {
      this.rv = o.metadata.resourceVersion;
      return false;
    }
    if (this.kind.table) {
      if (o.columnDefinitions && o.columnDefinitions.length) this.columns = o.columnDefinitions;
      for (const row of o.rows || []) {
        if (ev.type === 'DELETED') this.items.delete(this.key(row.object));
        else this.items.set(this.key(row.object), row);
        this.rv = row.object.metadata.resourceVersion || this.rv;
      }
    } else {
      if (ev.type === 'DELETED') this.items.delete(this.key(o));
      else this.items.set(this.key(o), o);
      this.rv = o.metadata.resourceVersion || this.rv;
    }
    this.notify();
    return false;
  }
}

// watch subscribes fn to kind in the current namespace scope (cluster-scoped
// kinds ignore it) and returns the collection and an unsubscribe function.
export function watch(kind, fn) {
  const ns = kind.namespaced ? scope : '';
  const id = kind.base + '/' + kind.resource + '@' + ns;
  let c = collections.get(id);
  if (!c) {
    c = new Collection(kind, ns);
    collections.set(id, c);
  }
  const off = c.subscribe(fn);
  if (c.loaded) fn(c);
  return [c, off];
}

// setScope changes the namespace scope and stops the watches of the old one.
export function setScope(ns) {
  scope = ns;
  for (const [id, c] of collections) {
    if (c.kind.namespaced && c.namespace !== ns) {
      c.stop();
      collections.delete(id);
    }
  }
}

export function currentScope() { return scope; }

// openWatches counts the running watches (tests read it).
export function openWatches() {
  return [...collections.values()].filter((c) => c.ctrl).map((c) => c.path);
}
