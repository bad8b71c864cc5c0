// toYAML writes a JSON value as YAML for editing; the API server parses YAML
// request bodies itself, so the dashboard needs no YAML parser.

const plain = /^[A-Za-z_/][A-Za-z0-9_./: -]*$/;
const reserved = /^(true|false|yes|no|on|off|null|~|y|n)$/i;

function scalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  if (s !== '' && plain.test(s) && !reserved.test(s) && !s.endsWith(' ') && !s.endsWith(':') &&
      !s.includes(': ') && !s.includes(' #') && isNaN(Number(s))) return s;
  return JSON.stringify(s);
}

function key(k) { return scalar(k); }

function block(s, indent) {
  const pad = ' '.repeat(indent);
  const chomp = s.endsWith('\n') ? '' : '-';
  const body = s.replace(/\n$/, '').split('\n').map((l) => (l ? pad + l : '')).join('\n');
  return `|${chomp}\n${body}`;
}

function isMultiline(v) { return typeof v === 'string' && v.includes('\n') && !/^\s/.test(v) && !/[\t\r]/.test(v); }

function emit(v, indent, out) {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v)) {
    for (const item of v) {
      if (item !== null && typeof item === 'object' && Object.keys(item).length) {
        const inner = [];
        emit(item, indent + 2, inner);
        out.push(pad + '- ' + inner[0].slice(indent + 2), ...inner.slice(1));
      } else {
        out.push(pad + '- ' + inline(item, indent + 2));
      }
    }
    return;
  }
  for (const [k, val] of Object.entries(v)) {
    if (val !== null && typeof val === 'object' && Object.keys(val).length) {
      out.push(pad + key(k) + ':');
      emit(val, Array.isArray(val) ? indent : indent + 2, out);
    } else {
      out.push(pad + key(k) + ': ' + inline(val, indent + 2));
    }
  }
}

function inline(v, indent) {
  if (Array.isArray(v)) return '[]';
  if (v !== null && typeof v === 'object') return '{}';
  if (isMultiline(v)) return block(v, indent);
  return scalar(v);
}

export function toYAML(v) {
  const out = [];
  emit(v, 0, out);
  return out.join('\n') + '\n';
}
