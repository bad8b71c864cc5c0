// The dashboard's entry point: session, navigation (hash routes), namespace
// scope and the buttons' actions.

import { loadSession, logout, session } from './api.js';
import { setScope, watch, openWatches, currentScope } from './store.js';
import * as pages from './pages.js';

const routes = {
  overview: pages.overview,
  workloads: pages.workloads,
  pods: pages.pods,
  pod: pages.pod,
  services: pages.services,
  config: pages.config,
  events: pages.eventsPage,
  crds: pages.crds,
  cr: pages.cr,
  edit: pages.edit,
  controllers: pages.controllers,
};

const main = document.getElementById('main');
const toast = document.getElementById('toast');
let current = null;

function say(text) {
  toast.textContent = text;
  toast.classList.add('show');
  clearTimeout(say.t);
  say.t = setTimeout(() => toast.classList.remove('show'), 4000);
}

function route() {
  const [name, ...rest] = (location.hash.replace(/^#\/?/, '') || 'overview').split('/');
  const page = routes[name] || pages.overview;
  if (current) current.cleanup();
  current = page(main, rest.filter((s) => s !== ''));
  for (const a of document.querySelectorAll('nav a')) {
    if (a.getAttribute('href') === '#/' + name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = (main.querySelector('h1')?.textContent || 'Converge') + ' · Converge';
  main.focus({ preventScroll: true });
}

async function start() {
  if (!(await loadSession())) {
    main.innerHTML = `<div class="login"><h1>Log in to Converge</h1>
      <p>Run <code>converge dashboard</code> on a machine with your kubeconfig: it opens this page with a one-time login link.
      <code>converge up</code> prints one for the admin when it starts.</p></div>`;
    document.querySelector('header .session').hidden = true;
    return;
  }
  document.getElementById('who').textContent = session.user;
  document.getElementById('logout').addEventListener('click', async () => {
    await logout();
    location.reload();
  });
  const sel = document.getElementById('ns');
  watch(pages.K.namespaces, (c) => {
    const cur = currentScope();
    const names = [...c.items.values()].map((n) => n.metadata.name);
    if (cur && !names.includes(cur)) names.push(cur);
    names.sort();
    sel.innerHTML = `<option value=""${cur ? '' : ' selected'}>All namespaces</option>` +
      names.map((n) => `<option${n === cur ? ' selected' : ''}>${pages.esc(n)}</option>`).join('');
  });
  sel.addEventListener('change', () => {
    setScope(sel.value);
    route();
  });
  main.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-act]');
    const panel = main.querySelector('#panel') || main;
    if (btn && !btn.disabled) {
      e.preventDefault();
      pages.onAction(btn, panel, say);
      return;
    }
    if (e.target.closest('button[data-cancel]')) {
      panel.innerHTML = '';
    }
  });
  window.addEventListener('hashchange', route);
  route();
}

// Tests and the curious can see the open watches: one per kind.
window.convergeDashboard = { openWatches };

start();
