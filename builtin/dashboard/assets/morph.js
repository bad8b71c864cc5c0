// morph makes the children of from look like those of to (a parsed copy of
// the new rendering) while keeping every node that did not change: a button
// being pressed, the focused control or a selection survive a live update.
// Elements with data-key are matched by key, others by position.

export function morph(from, to) {
  const keyed = new Map();
  for (const n of from.childNodes) if (n.nodeType === 1 && n.dataset.key) keyed.set(n.dataset.key, n);
  let cur = from.firstChild;
  for (const y of [...to.childNodes]) {
    const key = y.nodeType === 1 ? y.dataset.key : undefined;
    let x = null;
    if (key) {
      x = keyed.get(key) || null;
      keyed.delete(key);
    } else if (cur && !(cur.nodeType === 1 && cur.dataset.key)) {
      x = cur;
    }
    if (!x) {
      from.insertBefore(y, cur);
      continue;
    }
    if (x === cur) cur = cur.nextSibling;
    else from.insertBefore(x, cur);
    patch(from, x, y);
  }
  while (cur) {
    const next = cur.nextSibling;
    from.removeChild(cur);
    cur = next;
  }
}

function patch(parent, x, y) {
  if (x.nodeType !== y.nodeType || x.nodeName !== y.nodeName) {
    parent.replaceChild(y, x);
    return;
  }
  if (x.nodeType !== 1) {
    if (x.nodeValue !== y.nodeValue) x.nodeValue = y.nodeValue;
    return;
  }
  if (x.isEqualNode(y)) return;
  for (const { name } of [...x.attributes]) if (!y.hasAttribute(name)) x.removeAttribute(name);
  for (const { name, value } of y.attributes) if (x.getAttribute(name) !== value) x.setAttribute(name, value);
  morph(x, y);
}
