// The view: reads the inputs, asks the engine, draws the answer. Compose,
// decode, ranges and bulk decode run here in the browser with no request;
// only Generate asks the server, and only when the page was served by one
// (<html data-api>). The same code runs from a saved file.
import * as engine from './engine.js';
import { LANGS, STRINGS, translate, fieldLabel, errorMessage } from './strings.js';

const STORE = { lang: 'snowflake.lang', theme: 'snowflake.theme', zone: 'snowflake.zone', unit: 'snowflake.unit' };
const CUSTOM = 'custom';
// More rows than this make the table slow to draw; the CSV keeps them all.
const TABLE_ROWS = 2000;

const $ = (selector) => document.querySelector(selector);
const byId = (id) => document.getElementById(id);

const state = {
  lang: 'en',
  api: document.documentElement.dataset.api || null,
  layout: null, // the engine layout in use, or null while the custom one is invalid
  mode: 'compose', // which form made the result
  result: null, // the engine's decoded breakdown on screen
  composedFrom: null, // the resolved inputs of a composed result, for the share link
  undo: null, // Compose's own input, kept when a decoded ID was loaded into it
  errors: new Map(), // error box id -> EngineError (or a message key), redrawn on a language switch
  bulkRows: null,
  generated: null,
  statusTimer: 0,
};

// ---- small helpers ----------------------------------------------------------

function t(key, vars) {
  return translate(state.lang, key, vars);
}

function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (key === 'text') node.textContent = value;
    else if (key === 'className') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function num(value, options) {
  return new Intl.NumberFormat(state.lang, options).format(value);
}

function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage can be off; the page still works, it just forgets
  }
}

function store(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // not remembered, but applied
  }
}

function bitsText(n) {
  return n === 1 ? t('bits.one') : t('bits.many', { n });
}

function segmentLabel(name) {
  const key = `segment.${name}`;
  return key in STRINGS[state.lang] || key in STRINGS.en ? t(key) : name;
}

function unit() {
  return byId('unit').value === 's' ? 's' : 'ms';
}

// ---- time and zones -----------------------------------------------------------

const DATE_LIMIT = 8640000000000000n; // what a JavaScript Date can hold, in ms

function zone() {
  const choice = byId('zone').value;
  if (choice === 'local') return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  if (choice === 'other') {
    // While a name is being typed, and is not a zone yet, times stay in UTC.
    const name = byId('zone-name').value.trim();
    return name && validZone(name) ? name : 'UTC';
  }
  return 'UTC';
}

function validZone(name) {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function zoneParts(ms, timeZone) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (type) => Number(parts.find((p) => p.type === type).value);
  return { y: get('year'), mo: get('month'), d: get('day'), h: get('hour'), mi: get('minute'), s: get('second') };
}

// The zone's offset from UTC at a moment, in ms.
function zoneOffset(ms, timeZone) {
  const p = zoneParts(ms, timeZone);
  const asUtc = Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

// A time in the chosen zone: "2024-01-31 13:00:00.000 GMT+1". Outside what
// a Date holds, the engine's own UTC form.
function zoned(ms, timeZone) {
  if (ms > DATE_LIMIT || ms < -DATE_LIMIT) return engine.isoOf(ms);
  const n = Number(ms);
  const p = zoneParts(n, timeZone);
  const name = new Intl.DateTimeFormat(state.lang, { timeZone, timeZoneName: 'shortOffset' })
    .formatToParts(new Date(n))
    .find((x) => x.type === 'timeZoneName').value;
  const two = (v) => String(v).padStart(2, '0');
  const milli = String(((n % 1000) + 1000) % 1000).padStart(3, '0');
  return `${String(p.y).padStart(4, '0')}-${two(p.mo)}-${two(p.d)} ${two(p.h)}:${two(p.mi)}:${two(p.s)}.${milli} ${name}`;
}

function relative(ms, nowMs) {
  if (ms > DATE_LIMIT || ms < -DATE_LIMIT) return '';
  const diff = Number(ms - nowMs) / 1000;
  const abs = Math.abs(diff);
  const steps = [
    ['year', 31557600],
    ['month', 2629800],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  const [name, size] = steps.find(([, s]) => abs >= s) || steps[steps.length - 1];
  return new Intl.RelativeTimeFormat(state.lang, { numeric: 'auto' }).format(Math.round(diff / size), name);
}

function unixText(ms) {
  if (unit() === 'ms') return ms.toString();
  const sign = ms < 0n ? '-' : '';
  const abs = ms < 0n ? -ms : ms;
  const frac = abs % 1000n;
  return `${sign}${abs / 1000n}${frac ? `.${frac.toString().padStart(3, '0').replace(/0+$/, '')}` : ''}`;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A time typed by a person, as Unix-ms BigInt: a whole number (or decimal
 * seconds) in the chosen unit, or a date, read in the chosen zone unless it
 * names its own offset. Null when it is neither.
 */
function parseTime(text, inUnit = unit()) {
  if (/^-?\d+$/.test(text)) return inUnit === 's' ? BigInt(text) * 1000n : BigInt(text);
  if (inUnit === 's' && /^-?\d+\.\d{1,3}$/.test(text)) {
    const [whole, frac] = text.split('.');
    const ms = BigInt(whole.replace('-', '')) * 1000n + BigInt(frac.padEnd(3, '0'));
    return text.startsWith('-') ? -ms : ms;
  }
  const m = DATE_RE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', offset] = m;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0')));
  const check = new Date(wall);
  if (Number.isNaN(wall) || check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1) return null;
  if (offset) {
    if (/^z$/i.test(offset)) return BigInt(wall);
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.replace(/[^0-9]/g, '');
    return BigInt(wall - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60000);
  }
  const tz = zone();
  if (tz === 'UTC') return BigInt(wall);
  // The wall time's offset may differ from the guess's across a DST change;
  // a second pass settles it.
  let guess = wall - zoneOffset(wall, tz);
  guess = wall - zoneOffset(guess, tz);
  return BigInt(guess);
}

// ---- errors -------------------------------------------------------------------

// Error box "error-X" belongs to control "X" when X is one of the page's own
// (hyphenated) ids, else to the field input "input-X". Field names cannot hold
// a hyphen, so the two never meet.
function controlFor(box) {
  const rest = box.slice('error-'.length);
  return rest.includes('-') ? byId(rest) : byId(`input-${rest}`);
}

function messageOf(error) {
  if (typeof error === 'string') return t(error);
  if (error instanceof engine.EngineError) return errorMessage(state.lang, error, { iso: engine.isoOf, unit: unit() });
  return String(error.message || error);
}

function setError(box, error) {
  state.errors.set(box, error);
  const node = byId(box);
  if (!node) return;
  node.textContent = messageOf(error);
  node.hidden = false;
  const control = controlFor(box);
  if (control) control.setAttribute('aria-invalid', 'true');
}

function clearError(box) {
  state.errors.delete(box);
  const node = byId(box);
  if (node) {
    node.textContent = '';
    node.hidden = true;
  }
  const control = controlFor(box);
  if (control) control.removeAttribute('aria-invalid');
}

function redrawErrors() {
  for (const [box, error] of state.errors) {
    const node = byId(box);
    if (node) node.textContent = messageOf(error);
  }
}

// ---- layout -------------------------------------------------------------------

function renderLayoutOptions() {
  const select = byId('layout');
  const chosen = select.value;
  select.replaceChildren(
    ...engine.PRESETS.map((name) => el('option', { value: name, text: `${name} · ${t(`platform.${name}`)}` })),
    el('option', { value: CUSTOM, text: t('layout.custom') }),
  );
  if (chosen) select.value = chosen;
}

// The custom layout from its three inputs, or null with the errors marked.
function customLayout() {
  for (const box of ['error-layout-spec', 'error-layout-epoch', 'error-layout-tick']) clearError(box);
  const spec = byId('layout-spec').value.trim();
  let layout;
  try {
    layout = engine.parseLayout(spec);
  } catch (error) {
    setError('error-layout-spec', error);
    return null;
  }
  const epochText = byId('layout-epoch').value.trim();
  if (epochText !== '') {
    const epoch = parseTime(epochText, 'ms');
    if (epoch === null) {
      setError('error-layout-epoch', new engine.EngineError('epoch.notATime', 'epoch', epochText));
      return null;
    }
    try {
      layout = engine.withEpoch(layout, epoch);
    } catch (error) {
      setError('error-layout-epoch', error);
      return null;
    }
  }
  const tickText = byId('layout-tick').value.trim();
  if (tickText !== '') {
    if (!/^\d+$/.test(tickText)) {
      setError('error-layout-tick', new engine.EngineError('tick.notANumber', 'tick_ms', tickText));
      return null;
    }
    try {
      layout = engine.withTick(layout, BigInt(tickText));
    } catch (error) {
      setError('error-layout-tick', error);
      return null;
    }
  }
  return layout;
}

function resolveLayout() {
  const choice = byId('layout').value;
  byId('custom-box').hidden = choice !== CUSTOM;
  return choice === CUSTOM ? customLayout() : engine.preset(choice);
}

function renderLayoutInfo() {
  const layout = state.layout;
  const info = byId('layout-info');
  const hint = byId('hint-timestamp');
  byId('timestamp-label').textContent = t(`timestamp.label.${unit()}`);
  if (!layout) {
    info.textContent = '';
    hint.textContent = '';
    return;
  }
  const ids = layout.idsPerTick === null ? '—' : num(Number(layout.idsPerTick) / Number(layout.tickMs), { maximumFractionDigits: 2 });
  fill(info, 'layout.info', {
    epoch: engine.isoOf(layout.epochMs),
    tick: num(layout.tickMs),
    last: engine.isoOf(layout.lastMs),
    ids,
    nodes: num(layout.nodes),
    bits: t(layout.jsSafe ? 'layout.jsSafe' : 'layout.notJsSafe'),
  });
  fill(hint, 'timestamp.hint', {
    unit: t(unit() === 's' ? 'unit.s' : 'unit.ms'),
    from: engine.isoOf(layout.epochMs).slice(0, 10),
    to: engine.isoOf(layout.lastMs).slice(0, 10),
  });
}

// Like t(), into a node, each value in a span that does not wrap.
function fill(node, key, vars) {
  const template = STRINGS[state.lang][key] ?? STRINGS.en[key] ?? key;
  const parts = template.split(/\{(\w+)\}/);
  node.replaceChildren(...parts.map((part, i) => (i % 2 === 1 && part in vars ? el('span', { className: 'nowrap', text: String(vars[part]) }) : part)));
}

// The colour of a part: sign and time have their own, the sequence its own,
// the node fields take the next of three in turn.
function segmentKind(layout, name) {
  if (name === engine.SIGN_FIELD || name === engine.UNUSED_FIELD) return 'seg-sign';
  if (name === engine.TIME_FIELD) return 'seg-time';
  if (layout && name === layout.sequence) return 'seg-seq';
  const nodeFields = layout ? layout.fields.map((f) => f.name).filter((n) => n !== layout.sequence) : [];
  return `seg-f${(Math.max(0, nodeFields.indexOf(name)) % 3) + 1}`;
}

// One labelled input per field, after the timestamp; values of fields with
// the same name carry over from the layout before.
function renderFields(values) {
  const grid = byId('compose-fields');
  const carried = values || fieldTexts();
  for (const old of grid.querySelectorAll('.field[data-field]:not([data-field="timestamp"])')) old.remove();
  // The old layout's field errors go with its fields.
  for (const box of [...state.errors.keys()]) if (!box.slice(6).includes('-') && box !== 'error-timestamp') state.errors.delete(box);
  if (!state.layout) return;
  for (const f of state.layout.fields) {
    const input = el('input', {
      id: `input-${f.name}`,
      name: f.name,
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: '0',
      'aria-describedby': `hint-${f.name} error-${f.name}`,
    });
    input.value = carried[f.name] ?? '';
    grid.append(
      el('div', { className: 'field', 'data-field': f.name }, [
        el('label', { for: `input-${f.name}` }, [
          el('span', { className: `swatch ${segmentKind(state.layout, f.name)}`, 'aria-hidden': 'true' }),
          el('span', { className: 'field-label' }),
        ]),
        input,
        el('p', { id: `hint-${f.name}`, className: 'hint' }),
        el('p', { id: `error-${f.name}`, className: 'error', hidden: '' }),
      ]),
    );
  }
  relabelFields();
}

function relabelFields() {
  if (!state.layout) return;
  for (const f of state.layout.fields) {
    const box = $(`#compose-fields .field[data-field="${f.name}"]`);
    if (!box) continue;
    box.querySelector('.field-label').textContent = fieldLabel(state.lang, f.name);
    box.querySelector('.hint').textContent = t('field.range', { min: 0, max: num(f.max), bits: bitsText(f.bits) });
  }
}

function fieldTexts() {
  const values = {};
  for (const input of document.querySelectorAll('#compose-fields .field[data-field] input')) {
    if (input.name !== 'timestamp') values[input.name] = input.value;
  }
  return values;
}

// ---- compose and decode ---------------------------------------------------------

function fieldBoxes() {
  return state.layout ? state.layout.fields.map((f) => `error-${f.name}`) : [];
}

function compose() {
  state.mode = 'compose';
  clearError('error-timestamp');
  for (const box of fieldBoxes()) clearError(box);
  if (!state.layout) {
    renderResult(true);
    return;
  }
  const layout = state.layout;
  const timeText = byId('input-timestamp').value.trim();
  let ts = timeText === '' ? BigInt(Date.now()) : parseTime(timeText);
  let failed = false;
  if (ts === null) {
    setError('error-timestamp', new engine.EngineError('timestamp.notATime', 'timestamp', timeText));
    failed = true;
  } else {
    try {
      engine.timeUnits(layout, ts);
    } catch (error) {
      setError('error-timestamp', error);
      failed = true;
    }
  }
  // Every field is checked, so that each mistake shows beside its own input.
  const values = {};
  for (const f of layout.fields) {
    const text = byId(`input-${f.name}`).value.trim();
    try {
      values[f.name] = text === '' ? 0n : engine.parseValue(layout, f.name, text);
    } catch (error) {
      setError(`error-${f.name}`, error);
      failed = true;
    }
  }
  if (failed) {
    renderResult(true);
    return;
  }
  // Floored to the tick, so that the share link reproduces the same ID.
  ts = engine.timestampOf(layout, engine.timeUnits(layout, ts));
  const id = engine.compose(layout, ts, values);
  state.result = engine.decode(layout, id);
  state.composedFrom = { ts, values };
  renderResult(false);
}

function decodeFormat() {
  return byId('decode-format').value;
}

function decode() {
  state.mode = 'decode';
  clearError('error-decode-input');
  const text = byId('decode-input').value.trim();
  if (!state.layout) {
    renderResult(true);
    return;
  }
  let id;
  try {
    id = engine.parseId(text, decodeFormat());
    state.result = engine.decode(state.layout, id);
  } catch (error) {
    setError('error-decode-input', error);
    renderEverywhere(id ?? null);
    renderResult(true);
    return;
  }
  renderEverywhere(id);
  renderResult(false);
}

// Marks that the result above depends on; the range, bulk, zone and generate
// forms have their own.
const OWN_FORMS = ['error-range-from', 'error-range-to', 'error-bulk-input', 'error-zone-name', 'error-generate-count'];

function hasMarkedInput() {
  return [...state.errors.keys()].some((box) => !OWN_FORMS.includes(box));
}

function renderResult(failed) {
  const result = state.result;
  const section = byId('result');
  section.dataset.state = failed ? 'error' : result ? 'ok' : 'empty';
  // The old result stays only beside a mark that says what to fix.
  const stale = failed && result && hasMarkedInput();
  const show = result && (!failed || stale);
  byId('result-stale').hidden = !stale;
  byId('result-placeholder').hidden = Boolean(show);
  byId('result-placeholder').textContent = t(failed ? 'result.none' : 'result.placeholder');
  byId('result-body').hidden = !show;
  if (!show) {
    byId('result-source').textContent = '';
    return;
  }
  const layout = result.layout;
  byId('result-source').textContent = t(state.mode === 'decode' ? 'result.decoded' : 'result.composed', {
    layout: engine.layoutName(layout),
  });
  const forms = engine.textForms(result.id);
  byId('result-id').textContent = result.id.toString();
  for (const form of ['hex', 'base32', 'base62', 'base58']) byId(`result-${form}`).textContent = forms[form];
  byId('result-time').textContent = engine.isoOf(result.timestampMs);
  const tz = zone();
  byId('zoned-row').hidden = tz === 'UTC';
  byId('result-time-label').textContent = `${t('result.time')} (UTC)`;
  byId('result-zoned-label').textContent = `${t('result.time')} (${tz})`;
  byId('result-zoned').textContent = tz === 'UTC' ? '' : zoned(result.timestampMs, tz);
  byId('result-relative').textContent = relative(result.timestampMs, BigInt(Date.now()));
  byId('result-unix').textContent = `${unixText(result.timestampMs)} ${unit()}`;
  const discord = layout.name === 'discord';
  byId('discord-row').hidden = !discord;
  byId('result-discord').textContent = discord ? `<t:${floorSeconds(result.timestampMs)}:R>` : '';
  byId('to-compose').hidden = state.mode !== 'decode';
  byId('undo-compose').hidden = state.undo === null;
  renderBits(result);
  byId('share-link').value = shareUrl();
}

function floorSeconds(ms) {
  const s = ms / 1000n;
  return ms < 0n && ms % 1000n !== 0n ? s - 1n : s;
}

// The 64 bits as one strip of labelled parts, most significant first.
function renderBits(result) {
  let high = 64;
  const parts = result.segments.map((segment) => {
    const shift = high - segment.bits;
    high = shift;
    const part = el(
      'div',
      {
        className: `segment ${segmentKind(result.layout, segment.name)}`,
        role: 'listitem',
        'data-name': segment.name,
        'data-bits': String(segment.bits),
        'data-value': segment.value.toString(),
      },
      [
        el('span', { className: 'segment-head' }, [
          el('span', { className: 'segment-name', text: segmentLabel(segment.name) }),
          shift > 0 ? el('span', { className: 'segment-shift', text: `<< ${shift}` }) : '',
        ]),
        el('code', { className: 'segment-binary', text: segment.binary }),
        el('span', { className: 'segment-meta' }, [
          el('span', { className: 'segment-bits', text: bitsText(segment.bits) }),
          el('span', { className: 'segment-value', text: segment.value.toString() }),
        ]),
      ],
    );
    part.style.setProperty('--bits', String(segment.bits));
    return part;
  });
  byId('bits').replaceChildren(...parts);
}

function renderEverywhere(id) {
  const section = byId('everywhere');
  if (id === null || id === undefined) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  const rows = engine.decodeEverywhere(id, BigInt(Date.now())).map((row) => {
    const name = row.layout.name;
    const reason =
      row.reason === 'beforePlatform' ? t('reason.beforePlatform', { platform: t(`platform.${name}`) }) : row.reason ? t(`reason.${row.reason}`) : '';
    return el('tr', { 'data-layout': name, 'data-verdict': row.verdict }, [
      el('th', { scope: 'row', text: name }),
      el('td', { text: t(`platform.${name}`) }),
      el('td', {}, [el('code', { text: row.decoded ? engine.isoOf(row.decoded.timestampMs) : '—' })]),
      el('td', {}, [
        el('span', { className: `verdict verdict-${row.verdict}`, text: t(`verdict.${row.verdict}`) }),
        reason ? el('span', { className: 'verdict-reason', text: ` · ${reason}` }) : '',
      ]),
    ]);
  });
  byId('everywhere-rows').replaceChildren(...rows);
}

// Loads the decoded parts into Compose, keeping what was there for Undo.
function loadIntoCompose() {
  const result = state.result;
  if (!result || state.mode !== 'decode') return;
  state.undo = {
    layout: byId('layout').value,
    spec: byId('layout-spec').value,
    epoch: byId('layout-epoch').value,
    tick: byId('layout-tick').value,
    timestamp: byId('input-timestamp').value,
    values: fieldTexts(),
  };
  const values = Object.fromEntries(result.fields.map(([n, v]) => [n, v.toString()]));
  byId('input-timestamp').value = unixText(result.timestampMs);
  renderFields(values);
  compose();
  announce(t('result.loaded'));
  byId('input-timestamp').focus();
}

function undoCompose() {
  const saved = state.undo;
  if (!saved) return;
  state.undo = null;
  byId('layout').value = saved.layout;
  byId('layout-spec').value = saved.spec;
  byId('layout-epoch').value = saved.epoch;
  byId('layout-tick').value = saved.tick;
  byId('input-timestamp').value = saved.timestamp;
  state.layout = resolveLayout();
  renderLayoutInfo();
  renderFields(saved.values);
  compose();
  announce(t('result.restored'));
  byId('input-timestamp').focus();
}

// ---- share links ------------------------------------------------------------------

function layoutParams(params) {
  const choice = byId('layout').value;
  params.set('layout', choice);
  if (choice === CUSTOM) {
    params.set('spec', byId('layout-spec').value.trim());
    if (byId('layout-epoch').value.trim()) params.set('epoch', byId('layout-epoch').value.trim());
    if (byId('layout-tick').value.trim()) params.set('tick', byId('layout-tick').value.trim());
  }
}

function shareUrl() {
  const result = state.result;
  if (!result) return '';
  const params = new URLSearchParams();
  layoutParams(params);
  if (state.mode === 'decode') {
    params.set('decode', result.id.toString());
  } else if (state.composedFrom) {
    // The resolved time, not the input: empty means "now", and a link should
    // show the same ID tomorrow.
    params.set('timestamp', state.composedFrom.ts.toString());
    for (const [name, value] of Object.entries(state.composedFrom.values)) params.set(name, value.toString());
  }
  params.set('lang', state.lang);
  const base = location.protocol === 'file:' ? location.href.split(/[?#]/)[0] : `${location.origin}${location.pathname}`;
  return `${base}?${params}`;
}

// ---- date -> ID range ---------------------------------------------------------------

function range() {
  clearError('error-range-from');
  clearError('error-range-to');
  byId('range-result').hidden = true;
  if (!state.layout) return;
  const inputs = { from: byId('range-from').value.trim(), to: byId('range-to').value.trim() };
  const times = {};
  for (const [name, text] of Object.entries(inputs)) {
    times[name] = parseTime(text);
    if (times[name] === null) setError(`error-range-${name}`, new engine.EngineError('timestamp.notATime', name, text));
  }
  if (times.from === null || times.to === null) return;
  let found;
  try {
    found = engine.bounds(state.layout, times.from, times.to);
  } catch (error) {
    setError(`error-range-${error.field === 'to' ? 'to' : 'from'}`, error);
    return;
  }
  byId('range-first').textContent = found.first.toString();
  byId('range-last').textContent = found.last.toString();
  byId('range-sql').textContent = `WHERE id BETWEEN ${found.first} AND ${found.last}`;
  byId('range-result').hidden = false;
}

// ---- bulk decode ---------------------------------------------------------------------

function bulk() {
  clearError('error-bulk-input');
  state.bulkRows = null;
  byId('bulk-summary').textContent = '';
  if (!state.layout) return;
  const text = byId('bulk-input').value;
  let rows;
  try {
    rows = engine.decodeMany(state.layout, text, decodeFormat());
  } catch (error) {
    setError('error-bulk-input', error);
    renderBulk();
    return;
  }
  if (rows.length === 0) {
    setError('error-bulk-input', 'bulk.empty');
    renderBulk();
    return;
  }
  state.bulkRows = rows;
  renderBulk();
}

// The field columns of the table: the layout's the rows were decoded with.
function bulkColumns() {
  const first = (state.bulkRows || []).find((r) => r.decoded);
  return first ? first.decoded.fields.map(([name]) => name) : [];
}

function renderBulk() {
  const rows = state.bulkRows;
  const box = byId('bulk-box');
  byId('bulk-copy').hidden = !rows;
  byId('bulk-download').hidden = !rows;
  if (!rows) {
    box.hidden = true;
    byId('bulk-table').replaceChildren();
    return;
  }
  const fields = bulkColumns();
  const bad = rows.filter((r) => r.error).length;
  const summary = bad
    ? t('bulk.summary', { ok: num(rows.length - bad), total: num(rows.length), bad: num(bad) })
    : t('bulk.summaryOk', { total: num(rows.length) });
  byId('bulk-summary').textContent = rows.length > TABLE_ROWS ? `${summary} ${t('bulk.shown', { shown: num(TABLE_ROWS), total: num(rows.length) })}` : summary;
  const head = el('thead', {}, [
    el('tr', {}, [
      el('th', { scope: 'col', text: t('bulk.line') }),
      el('th', { scope: 'col', text: t('bulk.input') }),
      el('th', { scope: 'col', text: t('result.id') }),
      el('th', { scope: 'col', text: `${t('result.time')} (UTC)` }),
      ...fields.map((name) => el('th', { scope: 'col', text: fieldLabel(state.lang, name) })),
      el('th', { scope: 'col', text: t('bulk.error') }),
    ]),
  ]);
  const body = el('tbody');
  for (const row of rows.slice(0, TABLE_ROWS)) {
    const values = row.decoded ? Object.fromEntries(row.decoded.fields.map(([n, v]) => [n, v.toString()])) : {};
    body.append(
      el('tr', { className: row.error ? 'bad-row' : null, 'data-line': String(row.line) }, [
        el('td', { text: String(row.line) }),
        el('td', {}, [el('code', { text: row.input })]),
        el('td', {}, [el('code', { text: row.decoded ? row.decoded.id.toString() : '' })]),
        el('td', {}, [el('code', { text: row.decoded ? engine.isoOf(row.decoded.timestampMs) : '' })]),
        ...fields.map((name) => el('td', { text: values[name] ?? '' })),
        el('td', { className: row.error ? 'row-error' : null, text: row.error ? messageOf(row.error) : '' }),
      ]),
    );
  }
  byId('bulk-table').replaceChildren(el('caption', { className: 'sr-only', text: t('bulk.caption') }), head, body);
  box.hidden = false;
}

function bulkCsv() {
  const rows = state.bulkRows || [];
  const fields = bulkColumns();
  const lines = [['line', 'input', 'id', 'timestamp_ms', 'time', ...fields, 'error'].join(',')];
  for (const row of rows) {
    const d = row.decoded;
    const values = d ? Object.fromEntries(d.fields.map(([n, v]) => [n, v.toString()])) : {};
    lines.push(
      [row.line, row.input, d ? d.id : '', d ? d.timestampMs : '', d ? engine.isoOf(d.timestampMs) : '', ...fields.map((n) => values[n] ?? ''), row.error ? messageOf(row.error) : '']
        .map(engine.csvField)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

function downloadCsv() {
  const url = URL.createObjectURL(new Blob([bulkCsv()], { type: 'text/csv;charset=utf-8' }));
  const link = el('a', { href: url, download: `snowflake-${engine.layoutName(state.layout).replace(/[^a-z0-9]+/gi, '-')}.csv`, className: 'offscreen' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// ---- generate (served page only) -----------------------------------------------------

async function generate() {
  const button = byId('generate-submit');
  const count = byId('generate-count').value;
  clearError('error-generate-count');
  button.disabled = true;
  try {
    const response = await fetch(`${state.api}/ids?count=${encodeURIComponent(count)}`, {
      method: 'POST',
      headers: { accept: 'application/json' },
    });
    const body = (response.headers.get('content-type') || '').includes('json') ? await response.json() : null;
    if (response.ok && body && Array.isArray(body.ids)) {
      state.generated = body;
      renderGenerated();
    } else {
      setError('error-generate-count', { message: body && body.detail ? body.detail : t('error.status', { status: response.status }) });
    }
  } catch {
    setError('error-generate-count', 'error.network');
  } finally {
    button.disabled = false;
  }
}

function renderGenerated() {
  const data = state.generated;
  if (!data) {
    byId('generated').replaceChildren();
    return;
  }
  const caption = el('li', { className: 'generated-caption', text: t('generate.caption', { count: num(data.ids.length), layout: data.layout }) });
  const items = data.ids.map((id) =>
    el('li', { className: 'generated-item' }, [
      el('code', { className: 'generated-id', text: id }),
      el('button', { type: 'button', className: 'link-button decode-generated', 'data-id': id, 'aria-label': t('generate.decodeLabel', { id }), text: t('generate.decode') }),
    ]),
  );
  byId('generated').replaceChildren(caption, ...items);
}

// ---- copying -------------------------------------------------------------------------

async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // denied or unavailable: fall back to a selection
  }
  const focused = document.activeElement;
  const area = el('textarea', { readonly: '', className: 'offscreen', 'aria-hidden': 'true', tabindex: '-1' });
  area.value = text;
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  if (focused && typeof focused.focus === 'function') focused.focus();
  return copied;
}

function announce(text) {
  const status = byId('copy-status');
  status.textContent = text;
  clearTimeout(state.statusTimer);
  state.statusTimer = setTimeout(() => {
    status.textContent = '';
  }, 5000);
}

async function copyFrom(button) {
  const source = byId(button.dataset.copy);
  const text = source ? (source.value ?? source.textContent).trim() : '';
  if (!text) return;
  const copied = await copyText(text);
  const what = t(button.dataset.what);
  const status = button.closest('#bulk') ? byId('bulk-summary') : byId('copy-status');
  if (status.id === 'copy-status') announce(t(copied ? 'copy.done' : 'copy.failed', { what }));
  else status.textContent = t(copied ? 'copy.done' : 'copy.failed', { what });
}

// ---- language, theme, settings ---------------------------------------------------------

function initialLang() {
  const fromQuery = new URLSearchParams(location.search).get('lang');
  if (LANGS.includes(fromQuery)) return fromQuery;
  const remembered = stored(STORE.lang);
  if (LANGS.includes(remembered)) return remembered;
  // The server picks from Accept-Language; a saved page leaves it to the browser.
  const fromHtml = (document.documentElement.lang || '').slice(0, 2).toLowerCase();
  if (!document.documentElement.hasAttribute('data-lang-auto') && LANGS.includes(fromHtml)) return fromHtml;
  const fromBrowser = (navigator.language || '').slice(0, 2).toLowerCase();
  return LANGS.includes(fromBrowser) ? fromBrowser : 'en';
}

function applyStrings() {
  document.documentElement.lang = state.lang;
  document.title = t('doc.title');
  for (const node of document.querySelectorAll('[data-i18n]')) {
    const text = t(node.dataset.i18n);
    // The language buttons keep their visible code; only the hidden name changes.
    node.textContent = node.classList.contains('sr-only') ? ` ${text}` : text;
  }
  for (const node of document.querySelectorAll('[data-i18n-html]')) node.innerHTML = t(node.dataset.i18nHtml);
  for (const node of document.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of node.dataset.i18nAttr.split(';')) {
      const [attr, key] = pair.split(':');
      node.setAttribute(attr, t(key));
    }
  }
  for (const button of document.querySelectorAll('.lang-switch button')) {
    button.setAttribute('aria-pressed', String(button.dataset.lang === state.lang));
  }
  for (const button of document.querySelectorAll('button[data-copy]')) {
    if (button.dataset.i18n) continue;
    button.textContent = t('copy');
    button.setAttribute('aria-label', t('copy.label', { what: t(button.dataset.what) }));
  }
  byId('zone-local').textContent = t('zone.local', { zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' });
  byId('hint-range-inputs').textContent = t('range.hint', { unit: t(unit() === 's' ? 'unit.s' : 'unit.ms') });
  renderLayoutOptions();
  renderLayoutInfo();
  relabelFields();
  redrawErrors();
  renderResult(byId('result').dataset.state === 'error');
  if (!byId('everywhere').hidden && state.result && state.mode === 'decode') renderEverywhere(state.result.id);
  renderBulk();
  renderGenerated();
  byId('copy-status').textContent = '';
}

function setLang(lang) {
  if (!LANGS.includes(lang)) return;
  state.lang = lang;
  store(STORE.lang, lang);
  applyStrings();
}

function applyTheme(choice) {
  const theme = ['light', 'dark'].includes(choice) ? choice : 'system';
  byId('theme').value = theme;
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

function applyZone() {
  const other = byId('zone').value === 'other';
  byId('zone-name-box').hidden = !other;
  clearError('error-zone-name');
  if (other) {
    const name = byId('zone-name').value.trim();
    if (name && !validZone(name)) setError('error-zone-name', { message: t('zone.bad', { value: name }) });
    else if (name) store(STORE.zone, name);
  } else {
    store(STORE.zone, byId('zone').value);
  }
  if (state.result) renderResult(byId('result').dataset.state === 'error');
}

function fillZoneList() {
  const list = byId('zone-list');
  if (list.childElementCount || typeof Intl.supportedValuesOf !== 'function') return;
  list.replaceChildren(...Intl.supportedValuesOf('timeZone').map((z) => el('option', { value: z })));
}

// ---- wiring ---------------------------------------------------------------------------

function recompute() {
  const decoding = state.mode === 'decode' && byId('decode-input').value.trim() !== '';
  if (decoding) decode();
  else compose();
}

function changeLayout() {
  const choice = byId('layout').value;
  if (choice === CUSTOM && byId('layout-spec').value.trim() === '' && state.layout) {
    // Start a custom layout from the one in use.
    byId('layout-spec').value = state.layout.spec;
    byId('layout-epoch').value = state.layout.epochMs.toString();
    byId('layout-tick').value = state.layout.tickMs.toString();
  }
  const before = state.layout;
  state.layout = resolveLayout();
  renderLayoutInfo();
  // While a custom spec is being typed and is invalid, the inputs stay as
  // they were, values and all.
  if (state.layout && !(before && before.spec === state.layout.spec)) renderFields();
  recompute();
}

function wire() {
  for (const button of document.querySelectorAll('.lang-switch button')) {
    button.addEventListener('click', () => setLang(button.dataset.lang));
  }
  byId('theme').addEventListener('change', (event) => {
    applyTheme(event.target.value);
    store(STORE.theme, event.target.value);
  });
  byId('zone').addEventListener('change', () => {
    if (byId('zone').value === 'other') fillZoneList();
    applyZone();
  });
  byId('zone-name').addEventListener('input', applyZone);
  byId('unit').addEventListener('change', () => {
    // A whole number typed in the old unit is carried over into the new one.
    const input = byId('input-timestamp');
    const typed = input.value.trim();
    const ms = parseTime(typed, unit() === 's' ? 'ms' : 's');
    if (ms !== null && /^-?[0-9.]+$/.test(typed)) input.value = unixText(ms);
    store(STORE.unit, unit());
    applyStrings();
    recompute();
  });
  byId('layout').addEventListener('change', changeLayout);
  for (const id of ['layout-spec', 'layout-epoch', 'layout-tick']) byId(id).addEventListener('input', changeLayout);
  byId('compose-fields').addEventListener('input', (event) => {
    if (event.target.matches('input')) compose();
  });
  byId('compose-form').addEventListener('submit', (event) => {
    event.preventDefault();
    compose();
  });
  byId('decode-input').addEventListener('input', () => {
    if (byId('decode-input').value.trim() === '') clearError('error-decode-input');
    else decode();
  });
  byId('decode-format').addEventListener('change', () => {
    if (byId('decode-input').value.trim() !== '') decode();
  });
  byId('decode-form').addEventListener('submit', (event) => {
    event.preventDefault();
    decode();
  });
  byId('range-form').addEventListener('submit', (event) => {
    event.preventDefault();
    range();
  });
  byId('bulk-form').addEventListener('submit', (event) => {
    event.preventDefault();
    bulk();
  });
  byId('bulk-copy').addEventListener('click', async () => {
    const copied = await copyText(bulkCsv());
    byId('bulk-summary').textContent = t(copied ? 'copy.done' : 'copy.failed', { what: 'CSV' });
  });
  byId('bulk-download').addEventListener('click', downloadCsv);
  byId('to-compose').addEventListener('click', loadIntoCompose);
  byId('undo-compose').addEventListener('click', undoCompose);
  document.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-copy]');
    if (button) copyFrom(button);
  });
  byId('share-link').addEventListener('focus', (event) => event.target.select());
  if (state.api) {
    byId('generate-form').hidden = false;
    byId('generate-form').addEventListener('submit', (event) => {
      event.preventDefault();
      generate();
    });
    byId('generated').addEventListener('click', (event) => {
      const button = event.target.closest('button[data-id]');
      if (!button) return;
      if (state.generated && engine.preset(state.generated.layout)) {
        byId('layout').value = state.generated.layout;
        changeLayout();
      }
      byId('decode-format').value = 'auto';
      byId('decode-input').value = button.dataset.id;
      decode();
      byId('result').scrollIntoView({ block: 'nearest' });
    });
  } else {
    byId('generate-offline').hidden = false;
  }
}

// A share link restores its inputs: ?layout=…[&spec&epoch&tick]&timestamp=…&<field>=… or ?decode=ID.
function restore() {
  const query = new URLSearchParams(location.search);
  applyTheme(stored(STORE.theme));
  const savedUnit = stored(STORE.unit);
  if (savedUnit === 's') byId('unit').value = 's';
  const savedZone = stored(STORE.zone);
  if (savedZone === 'local' || savedZone === 'UTC') byId('zone').value = savedZone;
  else if (savedZone && validZone(savedZone)) {
    byId('zone').value = 'other';
    byId('zone-name').value = savedZone;
    byId('zone-name-box').hidden = false;
  }
  state.lang = initialLang();
  renderLayoutOptions();
  const wanted = (query.get('layout') || 'twitter').toLowerCase();
  if (wanted === CUSTOM) {
    byId('layout').value = CUSTOM;
    byId('layout-spec').value = query.get('spec') || '';
    byId('layout-epoch').value = query.get('epoch') || '';
    byId('layout-tick').value = query.get('tick') || '';
  } else {
    byId('layout').value = engine.PRESETS.includes(wanted) ? wanted : 'twitter';
  }
  state.layout = resolveLayout();
  const values = {};
  if (state.layout) for (const f of state.layout.fields) if (query.has(f.name)) values[f.name] = query.get(f.name);
  renderFields(values);
  // A link's timestamp is milliseconds, whatever the unit shown.
  const ts = query.get('timestamp');
  byId('input-timestamp').value = ts && unit() === 's' && /^\d+$/.test(ts) ? unixText(BigInt(ts)) : ts || '';
  applyStrings();
  if (query.get('decode')) {
    byId('decode-input').value = query.get('decode');
    decode();
  } else {
    compose();
  }
}

wire();
restore();
