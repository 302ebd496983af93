// The web tool: compose, decode and generate Snowflake IDs through the JSON
// API under /api/v1. The server does every computation; this file only reads
// inputs, calls the API and draws its answer.
//
// IDs stay strings from the JSON to the screen. They exceed 2^53, so a
// JavaScript Number would silently round them: never parse one.
'use strict';

(() => {
  const LANGS = ['en', 'de'];
  const STORAGE_KEY = 'snowflake.lang';
  const DEBOUNCE_MS = 250;

  // Every string of the interface, one dictionary per language. Keys ending
  // in "body" or "footer" hold trusted markup and are set as HTML.
  const STRINGS = {
    en: {
      'doc.title': 'Snowflake ID — compose, decode, generate',
      skip: 'Skip to the tool',
      title: 'Snowflake ID',
      tagline: 'Compose, decode and generate 64-bit, time-ordered IDs.',
      'lang.group': 'Language',
      'compose.heading': 'Compose an ID',
      'compose.intro': 'Choose a layout and enter the parts; the ID updates as you type.',
      'compose.submit': 'Compose',
      'layout.label': 'Layout',
      'layout.info': 'Epoch {epoch} · ticks of {tick} ms · runs out {last} · {ids} IDs per ms per node · {nodes} nodes',
      'timestamp.label': 'Timestamp (ms)',
      'timestamp.placeholder': 'now',
      'timestamp.hint': 'Unix milliseconds from {from} to {to}; empty means now',
      'field.range': '{min} to {max} ({bits})',
      'field.datacenter': 'Datacenter ID',
      'field.machine': 'Machine ID',
      'field.sequence': 'Sequence',
      'field.worker': 'Worker ID',
      'field.process': 'Process ID',
      'field.increment': 'Increment',
      'field.shard': 'Shard ID',
      'segment.sign': 'sign',
      'segment.timestamp': 'timestamp',
      'bits.one': '1 bit',
      'bits.many': '{n} bits',
      'result.heading': 'Result',
      'result.placeholder': 'Loading…',
      'result.none': 'No ID yet: fix the input marked above.',
      'result.stale': 'Fix the input marked above; this is the last valid result.',
      'result.composed': 'composed · {layout}',
      'result.decoded': 'decoded · {layout}',
      'result.id': 'ID (decimal)',
      'result.hex': 'Hexadecimal',
      'result.time': 'Time (UTC)',
      'result.ms': 'Unix milliseconds',
      'result.local': 'Local time',
      'result.bits': 'The 64 bits',
      copy: 'Copy',
      'copy.done': 'Copied to the clipboard.',
      'copy.failed': 'Could not copy; select the text and copy it by hand.',
      'share.label': 'Share link',
      'share.copy': 'Copy link',
      'decode.heading': 'Decode an ID',
      'decode.label': 'ID (decimal or 0x hex)',
      'decode.hint': 'Read with the layout chosen above.',
      'decode.submit': 'Decode',
      'generate.heading': 'Generate IDs',
      'generate.count': 'How many',
      'generate.submit': 'Generate',
      'generate.hint': "Fresh IDs from the server's own generator.",
      'generate.caption': '{count} from the server, layout {layout}, in the order issued:',
      'generate.decode': 'Decode',
      'generate.decodeLabel': 'Decode {id}',
      'error.network': 'The server could not be reached.',
      'error.status': 'The server answered with status {status}.',
      'error.layouts': 'The layouts could not be loaded: {detail}',
      'about.heading': 'How a Snowflake ID is built',
      'about.body': `
<p>A Snowflake ID is a 64-bit integer that says when and where it was made.
In Twitter's layout, the default, the bits are, from the most significant down:</p>
<div class="table-box"><table>
<thead><tr><th scope="col">bits</th><th scope="col">field</th><th scope="col">range</th></tr></thead>
<tbody>
<tr><td>1</td><td>sign, always 0, so the ID is positive as a signed 64-bit integer</td><td>0</td></tr>
<tr><td>41</td><td>milliseconds since the epoch 1288834974657 (2010-11-04T01:42:54.657Z)</td><td>0 to 2<sup>41</sup> − 1</td></tr>
<tr><td>5</td><td>datacenter</td><td>0 to 31</td></tr>
<tr><td>5</td><td>machine</td><td>0 to 31</td></tr>
<tr><td>12</td><td>sequence within the millisecond</td><td>0 to 4,095</td></tr>
</tbody></table></div>
<pre class="formula"><code>id = ((t − 1288834974657) &lt;&lt; 22) | (datacenter &lt;&lt; 17) | (machine &lt;&lt; 12) | sequence</code></pre>
<p>The worked example: t = 1288834975657 is 1,000 ms after the epoch; with datacenter 1,
machine 1 and sequence 0 the ID is (1000 &lt;&lt; 22) | (1 &lt;&lt; 17) | (1 &lt;&lt; 12) = 4194439168.</p>
<ul>
<li>The time field runs out in 2080 (at 2080-07-10T17:30:30.208Z), when its 41 bits of milliseconds are used up.</li>
<li>One node makes at most 4,096 IDs a millisecond, and 1,024 nodes (32 datacenters × 32 machines) can be addressed.</li>
<li>IDs sort by time. IDs from different nodes sort only as well as the nodes' clocks agree, so keep the clocks synchronised.</li>
<li>In JSON, IDs are strings: a JavaScript number is a double, exact only up to 2<sup>53</sup>
(9,007,199,254,740,992), and the IDs of today are far larger. This page never does arithmetic on an ID.</li>
</ul>
<p>The other presets move the boundaries and the epoch: Discord, Instagram, Sonyflake (10 ms ticks) and Mastodon.
Choose one above and the inputs and the bits follow it.</p>`,
      footer: 'The same service as JSON under <code>/api/v1</code> (<a href="/api/v1/openapi.json">OpenAPI</a>) and on the command line as <code>snowflake</code>.',
    },
    de: {
      'doc.title': 'Snowflake-ID — zusammensetzen, zerlegen, erzeugen',
      skip: 'Zum Werkzeug springen',
      title: 'Snowflake-ID',
      tagline: '64-Bit-IDs, nach Zeit geordnet: zusammensetzen, zerlegen, erzeugen.',
      'lang.group': 'Sprache',
      'compose.heading': 'ID zusammensetzen',
      'compose.intro': 'Wählen Sie ein Layout und geben Sie die Teile ein; die ID entsteht beim Tippen.',
      'compose.submit': 'Zusammensetzen',
      'layout.label': 'Layout',
      'layout.info': 'Epoche {epoch} · Takt {tick} ms · reicht bis {last} · {ids} IDs je ms und Knoten · {nodes} Knoten',
      'timestamp.label': 'Zeitstempel (ms)',
      'timestamp.placeholder': 'jetzt',
      'timestamp.hint': 'Unix-Millisekunden von {from} bis {to}; leer heißt jetzt',
      'field.range': '{min} bis {max} ({bits})',
      'field.datacenter': 'Rechenzentrums-ID',
      'field.machine': 'Maschinen-ID',
      'field.sequence': 'Sequenz',
      'field.worker': 'Worker-ID',
      'field.process': 'Prozess-ID',
      'field.increment': 'Inkrement',
      'field.shard': 'Shard-ID',
      'segment.sign': 'Vorzeichen',
      'segment.timestamp': 'Zeit',
      'segment.datacenter': 'Rechenzentrum',
      'segment.machine': 'Maschine',
      'segment.sequence': 'Sequenz',
      'segment.worker': 'Worker',
      'segment.process': 'Prozess',
      'segment.increment': 'Inkrement',
      'segment.shard': 'Shard',
      'bits.one': '1 Bit',
      'bits.many': '{n} Bit',
      'result.heading': 'Ergebnis',
      'result.placeholder': 'Wird geladen …',
      'result.none': 'Noch keine ID: Korrigieren Sie die markierte Eingabe.',
      'result.stale': 'Korrigieren Sie die markierte Eingabe; angezeigt wird das letzte gültige Ergebnis.',
      'result.composed': 'zusammengesetzt · {layout}',
      'result.decoded': 'zerlegt · {layout}',
      'result.id': 'ID (dezimal)',
      'result.hex': 'Hexadezimal',
      'result.time': 'Zeit (UTC)',
      'result.ms': 'Unix-Millisekunden',
      'result.local': 'Ortszeit',
      'result.bits': 'Die 64 Bit',
      copy: 'Kopieren',
      'copy.done': 'In die Zwischenablage kopiert.',
      'copy.failed': 'Kopieren nicht möglich; bitte den Text markieren und von Hand kopieren.',
      'share.label': 'Link zum Teilen',
      'share.copy': 'Link kopieren',
      'decode.heading': 'ID zerlegen',
      'decode.label': 'ID (dezimal oder 0x-hexadezimal)',
      'decode.hint': 'Gelesen mit dem oben gewählten Layout.',
      'decode.submit': 'Zerlegen',
      'generate.heading': 'IDs erzeugen',
      'generate.count': 'Anzahl',
      'generate.submit': 'Erzeugen',
      'generate.hint': 'Frische IDs vom Generator des Servers.',
      'generate.caption': '{count} vom Server, Layout {layout}, in der Reihenfolge der Ausgabe:',
      'generate.decode': 'Zerlegen',
      'generate.decodeLabel': '{id} zerlegen',
      'error.network': 'Der Server ist nicht erreichbar.',
      'error.status': 'Der Server antwortete mit Status {status}.',
      'error.layouts': 'Die Layouts konnten nicht geladen werden: {detail}',
      'about.heading': 'Wie eine Snowflake-ID aufgebaut ist',
      'about.body': `
<p>Eine Snowflake-ID ist eine 64-Bit-Ganzzahl, die festhält, wann und wo sie entstand.
Im Layout von Twitter, der Voreinstellung, sind die Bits vom höchstwertigen an:</p>
<div class="table-box"><table>
<thead><tr><th scope="col">Bits</th><th scope="col">Feld</th><th scope="col">Bereich</th></tr></thead>
<tbody>
<tr><td>1</td><td>Vorzeichen, immer 0, damit die ID als vorzeichenbehaftete 64-Bit-Zahl positiv ist</td><td>0</td></tr>
<tr><td>41</td><td>Millisekunden seit der Epoche 1288834974657 (2010-11-04T01:42:54.657Z)</td><td>0 bis 2<sup>41</sup> − 1</td></tr>
<tr><td>5</td><td>Rechenzentrum</td><td>0 bis 31</td></tr>
<tr><td>5</td><td>Maschine</td><td>0 bis 31</td></tr>
<tr><td>12</td><td>Sequenz innerhalb der Millisekunde</td><td>0 bis 4.095</td></tr>
</tbody></table></div>
<pre class="formula"><code>id = ((t − 1288834974657) &lt;&lt; 22) | (datacenter &lt;&lt; 17) | (machine &lt;&lt; 12) | sequence</code></pre>
<p>Das Rechenbeispiel: t = 1288834975657 liegt 1.000 ms nach der Epoche; mit Rechenzentrum 1,
Maschine 1 und Sequenz 0 ist die ID (1000 &lt;&lt; 22) | (1 &lt;&lt; 17) | (1 &lt;&lt; 12) = 4194439168.</p>
<ul>
<li>Das Zeitfeld läuft 2080 aus (am 2080-07-10T17:30:30.208Z), wenn seine 41 Bit Millisekunden aufgebraucht sind.</li>
<li>Ein Knoten erzeugt höchstens 4.096 IDs je Millisekunde, und 1.024 Knoten (32 Rechenzentren × 32 Maschinen) sind adressierbar.</li>
<li>IDs sind nach Zeit geordnet. IDs verschiedener Knoten aber nur so genau, wie deren Uhren übereinstimmen: Halten Sie die Uhren synchron.</li>
<li>In JSON sind IDs Zeichenketten: Eine JavaScript-Zahl ist ein Double und nur bis 2<sup>53</sup>
(9.007.199.254.740.992) exakt, heutige IDs sind weit größer. Diese Seite rechnet nie mit einer ID.</li>
</ul>
<p>Die anderen Voreinstellungen verschieben die Grenzen und die Epoche: Discord, Instagram, Sonyflake (Takt 10 ms) und Mastodon.
Wählen Sie oben eines, und die Eingaben und die Bits folgen ihm.</p>`,
      footer: 'Derselbe Dienst als JSON unter <code>/api/v1</code> (<a href="/api/v1/openapi.json">OpenAPI</a>) und auf der Kommandozeile als <code>snowflake</code>.',
    },
  };

  const $ = (selector) => document.querySelector(selector);

  const state = {
    lang: 'en',
    layouts: [],
    layout: null, // the chosen entry of /api/v1/layouts
    mode: 'compose', // which form made the result: 'compose' or 'decode'
    result: null, // the last good breakdown from the API
    generated: null, // the last answer of POST /api/v1/ids
    requestSeq: 0,
    controller: null,
    timer: 0,
    statusTimer: 0,
  };

  function t(key, vars = {}) {
    const text = STRINGS[state.lang][key] ?? STRINGS.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
  }

  // Like t(), into a node, each value in a span that does not wrap, so an
  // ISO date never breaks at its hyphens.
  function fill(node, key, vars) {
    const template = STRINGS[state.lang][key] ?? STRINGS.en[key] ?? key;
    const parts = template.split(/\{(\w+)\}/);
    node.replaceChildren(
      ...parts.map((part, i) => (i % 2 === 1 && part in vars ? el('span', { className: 'nowrap', text: String(vars[part]) }) : part)),
    );
  }

  function formatNumber(value, options) {
    return new Intl.NumberFormat(state.lang, options).format(value);
  }

  function bitsText(n) {
    return n === 1 ? t('bits.one') : t('bits.many', { n });
  }

  function fieldLabel(name) {
    const key = `field.${name}`;
    if (key in STRINGS.en) return t(key);
    return name.charAt(0).toUpperCase() + name.slice(1).replace(/_/g, ' ');
  }

  function segmentLabel(name) {
    const key = `segment.${name}`;
    return key in STRINGS[state.lang] || key in STRINGS.en ? t(key) : name;
  }

  // The colour of a part: the sign and the time have their own, the sequence
  // its own, and the node fields take the next of three in turn.
  function segmentKind(layout, name) {
    if (name === 'sign') return 'seg-sign';
    if (name === 'timestamp') return 'seg-time';
    if (layout && name === layout.sequence) return 'seg-seq';
    const nodeFields = layout ? layout.fields.map(([n]) => n).filter((n) => n !== layout.sequence) : [];
    const index = Math.max(0, nodeFields.indexOf(name));
    return `seg-f${(index % 3) + 1}`;
  }

  function findLayout(name) {
    return state.layouts.find((layout) => layout.name === name) || null;
  }

  // ---- requests -----------------------------------------------------------

  // Resolves to {data} or {problem}; a network failure rejects.
  async function request(url, init = {}) {
    const response = await fetch(url, { ...init, headers: { accept: 'application/json' } });
    const type = response.headers.get('content-type') || '';
    let body = null;
    if (type.includes('json')) {
      try {
        body = await response.json();
      } catch {
        body = null;
      }
    }
    if (response.ok && body !== null) return { data: body };
    if (body && typeof body.detail === 'string') return { problem: body };
    return { problem: { detail: t('error.status', { status: response.status }) } };
  }

  function schedule(task) {
    clearTimeout(state.timer);
    state.timer = setTimeout(task, DEBOUNCE_MS);
  }

  function runNow(task) {
    clearTimeout(state.timer);
    task();
  }

  // Only the answer to the latest request is drawn; an older one still in
  // flight is aborted, so a slow answer never overwrites a newer one.
  async function run(mode, url) {
    if (state.controller) state.controller.abort();
    const controller = new AbortController();
    state.controller = controller;
    const seq = ++state.requestSeq;
    $('#result').setAttribute('aria-busy', 'true');
    let outcome;
    try {
      outcome = await request(url, { signal: controller.signal });
    } catch (err) {
      if (err && err.name === 'AbortError') return;
      outcome = { problem: { detail: t('error.network') } };
    }
    if (seq !== state.requestSeq) return;
    $('#result').setAttribute('aria-busy', 'false');
    clearErrors();
    if (outcome.data) {
      state.mode = mode;
      state.result = outcome.data;
      if (mode === 'decode') fillComposeInputs(outcome.data);
      else $('#decode-input').value = '';
      renderResult();
    } else {
      showProblem(mode, outcome.problem);
      renderResult(true);
    }
  }

  function compose() {
    if (!state.layout) return;
    const params = new URLSearchParams({ layout: state.layout.name });
    const timestamp = $('#input-timestamp').value.trim();
    if (timestamp) params.set('timestamp', timestamp);
    for (const [name] of state.layout.fields) {
      const input = document.getElementById(`input-${name}`);
      const value = input ? input.value.trim() : '';
      if (value) params.set(name, value);
    }
    run('compose', `/api/v1/compose?${params}`);
  }

  function decode() {
    if (!state.layout) return;
    const id = $('#decode-input').value.trim();
    if (!id) {
      clearError('decode');
      return;
    }
    const params = new URLSearchParams({ layout: state.layout.name });
    run('decode', `/api/v1/decode/${encodeURIComponent(id)}?${params}`);
  }

  async function generate() {
    const button = $('#generate-submit');
    const count = $('#generate-count').value;
    clearError('generate');
    button.disabled = true;
    let outcome;
    try {
      outcome = await request(`/api/v1/ids?count=${encodeURIComponent(count)}`, { method: 'POST' });
    } catch {
      outcome = { problem: { detail: t('error.network') } };
    }
    button.disabled = false;
    if (outcome.data && Array.isArray(outcome.data.ids)) {
      state.generated = outcome.data;
      renderGenerated();
    } else {
      setError('generate', outcome.problem ? outcome.problem.detail : t('error.network'));
    }
  }

  // ---- errors -------------------------------------------------------------

  function controlFor(name) {
    if (name === 'layout') return $('#layout');
    if (name === 'decode') return $('#decode-input');
    if (name === 'generate') return $('#generate-count');
    return document.getElementById(`input-${name}`);
  }

  function setError(name, message) {
    const box = document.getElementById(`error-${name}`);
    const control = controlFor(name);
    if (!box) return;
    box.textContent = message;
    box.hidden = false;
    if (control) control.setAttribute('aria-invalid', 'true');
  }

  function clearError(name) {
    const box = document.getElementById(`error-${name}`);
    const control = controlFor(name);
    if (box) {
      box.textContent = '';
      box.hidden = true;
    }
    if (control) control.removeAttribute('aria-invalid');
  }

  function clearErrors() {
    clearError('layout');
    clearError('timestamp');
    clearError('decode');
    if (state.layout) for (const [name] of state.layout.fields) clearError(name);
    const general = $('#compose-error');
    general.textContent = '';
    general.hidden = true;
  }

  // The problem's `field` names the query parameter at fault; the message
  // goes beside that input, in the API's own words.
  function showProblem(mode, problem) {
    const detail = problem.detail || problem.title || t('error.status', { status: problem.status });
    const field = problem.field;
    const isLayoutField = state.layout && state.layout.fields.some(([name]) => name === field);
    if (field === 'layout') setError('layout', detail);
    else if (mode === 'decode') setError('decode', detail);
    else if (field === 'timestamp' || isLayoutField) setError(field, detail);
    else {
      const general = $('#compose-error');
      general.textContent = detail;
      general.hidden = false;
    }
  }

  // ---- drawing ------------------------------------------------------------

  function el(tag, attrs = {}, children = []) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === 'text') node.textContent = value;
      else if (key === 'className') node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  function renderLayoutOptions() {
    const select = $('#layout');
    select.replaceChildren(...state.layouts.map((layout) => el('option', { value: layout.name, text: layout.name })));
    if (state.layout) select.value = state.layout.name;
  }

  function renderLayoutInfo() {
    const layout = state.layout;
    const info = $('#layout-info');
    if (!layout) {
      info.textContent = '';
      return;
    }
    fill(info, 'layout.info', {
      epoch: layout.epoch,
      tick: formatNumber(layout.tick_ms),
      last: layout.last,
      ids: formatNumber(layout.ids_per_ms, { maximumFractionDigits: 2 }),
      nodes: formatNumber(layout.nodes),
    });
    fill($('#hint-timestamp'), 'timestamp.hint', {
      from: layout.epoch.slice(0, 10),
      to: layout.last.slice(0, 10),
    });
  }

  // One labelled input per field of the layout, after the timestamp, in the
  // layout's order. Values of fields with the same name carry over.
  function renderFields(values = {}) {
    const grid = $('#compose-fields');
    for (const old of grid.querySelectorAll('.field[data-field]:not([data-field="timestamp"])')) old.remove();
    for (const [name, bits] of state.layout.fields) {
      const input = el('input', {
        id: `input-${name}`,
        name,
        type: 'text',
        inputmode: 'numeric',
        autocomplete: 'off',
        spellcheck: 'false',
        placeholder: '0',
        'aria-describedby': `hint-${name} error-${name}`,
        'data-bits': String(bits),
      });
      input.value = values[name] ?? '';
      grid.append(
        el('div', { className: 'field', 'data-field': name }, [
          el('label', { for: `input-${name}` }, [
            el('span', { className: `swatch ${segmentKind(state.layout, name)}`, 'aria-hidden': 'true' }),
            el('span', { className: 'field-label' }),
          ]),
          input,
          el('p', { id: `hint-${name}`, className: 'hint' }),
          el('p', { id: `error-${name}`, className: 'error', hidden: '' }),
        ]),
      );
    }
    relabelFields();
  }

  function relabelFields() {
    if (!state.layout) return;
    for (const [name, bits] of state.layout.fields) {
      const box = $(`#compose-fields .field[data-field="${name}"]`);
      if (!box) continue;
      box.querySelector('.field-label').textContent = fieldLabel(name);
      // A display conversion only: 2^bits - 1 can pass 2^53 in a custom layout.
      const max = (1n << BigInt(bits)) - 1n;
      box.querySelector('.hint').textContent = t('field.range', {
        min: 0,
        max: formatNumber(max),
        bits: bitsText(bits),
      });
    }
  }

  function fieldValues() {
    const values = {};
    if (!state.layout) return values;
    for (const [name] of state.layout.fields) {
      const input = document.getElementById(`input-${name}`);
      if (input) values[name] = input.value;
    }
    return values;
  }

  function fillComposeInputs(result) {
    $('#input-timestamp').value = String(result.timestamp_ms);
    for (const [name, value] of Object.entries(result.fields || {})) {
      const input = document.getElementById(`input-${name}`);
      if (input) input.value = String(value);
    }
  }

  function renderResult(failed = false) {
    const result = state.result;
    const section = $('#result');
    section.dataset.state = failed ? 'error' : result ? 'ok' : 'empty';
    $('#result-stale').hidden = !(failed && result);
    $('#result-placeholder').hidden = Boolean(result);
    $('#result-placeholder').textContent = t(failed ? 'result.none' : 'result.placeholder');
    $('#result-body').hidden = !result;
    if (!result) {
      $('#result-source').textContent = '';
      return;
    }
    $('#result-source').textContent = t(state.mode === 'decode' ? 'result.decoded' : 'result.composed', {
      layout: result.layout,
    });
    $('#result-id').textContent = result.id;
    $('#result-hex').textContent = result.hex || '0x' + BigInt(result.id).toString(16);
    $('#result-time').textContent = result.time;
    $('#result-ms').textContent = String(result.timestamp_ms);
    $('#result-local').textContent = new Intl.DateTimeFormat(state.lang, {
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      fractionalSecondDigits: 3,
      timeZoneName: 'short',
    }).format(new Date(result.timestamp_ms));
    renderBits(result);
    updateShare();
  }

  // The 64 bits as one strip of labelled parts, most significant first. Each
  // part shows its name, its binary digits, its width and its value; the
  // shift is where its lowest bit lands in the ID.
  function renderBits(result) {
    const layout = findLayout(result.layout) || state.layout;
    const strip = $('#bits');
    strip.dataset.binary = result.binary || '';
    let high = 64;
    const parts = (result.segments || []).map((segment) => {
      const shift = high - segment.bits;
      high = shift;
      const kind = segmentKind(layout, segment.name);
      const meta = el('span', { className: 'segment-meta' }, [
        el('span', { className: 'segment-bits', text: bitsText(segment.bits) }),
        el('span', { className: 'segment-value', text: String(segment.value) }),
      ]);
      const part = el(
        'div',
        {
          className: `segment ${kind}`,
          role: 'listitem',
          'data-name': segment.name,
          'data-bits': String(segment.bits),
          'data-value': String(segment.value),
          'data-testid': `segment-${segment.name}`,
        },
        [
          el('span', { className: 'segment-head' }, [
            el('span', { className: 'segment-name', text: segmentLabel(segment.name) }),
            shift > 0 ? el('span', { className: 'segment-shift', text: `<< ${shift}` }) : '',
          ]),
          el('code', { className: 'segment-binary', text: segment.binary }),
          meta,
        ],
      );
      part.style.setProperty('--bits', String(segment.bits));
      return part;
    });
    strip.replaceChildren(...parts);
  }

  function shareUrl() {
    const result = state.result;
    if (!result) return '';
    const params = new URLSearchParams({ layout: result.layout });
    if (state.mode === 'decode') {
      params.set('decode', result.id);
    } else {
      // The resolved time, not the input: an empty input means "now", and a
      // link should show the same ID tomorrow.
      params.set('timestamp', String(result.timestamp_ms));
      for (const [name, value] of Object.entries(result.fields || {})) params.set(name, String(value));
    }
    params.set('lang', state.lang);
    return `${location.origin}${location.pathname}?${params}`;
  }

  function updateShare() {
    $('#share-link').value = shareUrl();
  }

  function renderGenerated() {
    const list = $('#generated');
    const data = state.generated;
    if (!data) {
      list.replaceChildren();
      return;
    }
    const caption = el('li', {
      className: 'generated-caption',
      text: t('generate.caption', { count: formatNumber(data.ids.length), layout: data.layout }),
    });
    const items = data.ids.map((id) =>
      el('li', { className: 'generated-item' }, [
        el('code', { className: 'generated-id', 'data-testid': 'generated-id', text: id }),
        el('button', {
          type: 'button',
          className: 'link-button decode-generated',
          'data-id': id,
          'aria-label': t('generate.decodeLabel', { id }),
          text: t('generate.decode'),
        }),
      ]),
    );
    list.replaceChildren(caption, ...items);
  }

  // ---- language -----------------------------------------------------------

  function storedLang() {
    try {
      return localStorage.getItem(STORAGE_KEY);
    } catch {
      return null; // storage can be disabled; the switch still works
    }
  }

  // A link's lang wins, then the visitor's own earlier choice, then the
  // server's pick from Accept-Language in <html lang>.
  function initialLang() {
    const fromQuery = new URLSearchParams(location.search).get('lang');
    if (LANGS.includes(fromQuery)) return fromQuery;
    const stored = storedLang();
    if (LANGS.includes(stored)) return stored;
    const fromHtml = (document.documentElement.lang || '').slice(0, 2).toLowerCase();
    return LANGS.includes(fromHtml) ? fromHtml : 'en';
  }

  function applyStrings() {
    document.documentElement.lang = state.lang;
    document.title = t('doc.title');
    for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
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
    renderLayoutInfo();
    relabelFields();
    renderResult($('#result').dataset.state === 'error');
    renderGenerated();
    $('#copy-status').textContent = '';
  }

  function setLang(lang) {
    if (!LANGS.includes(lang)) return;
    state.lang = lang;
    try {
      localStorage.setItem(STORAGE_KEY, lang);
    } catch {
      // not remembered, but switched
    }
    applyStrings();
  }

  // ---- copying ------------------------------------------------------------

  async function copyText(text) {
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        return true;
      }
    } catch {
      // denied or unavailable: fall through to the selection
    }
    const focused = document.activeElement;
    const area = el('textarea', { readonly: '', className: 'offscreen', 'aria-hidden': 'true' });
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

  async function copyWithStatus(text, button) {
    if (!text) return;
    const copied = await copyText(text);
    const status = $('#copy-status');
    status.textContent = t(copied ? 'copy.done' : 'copy.failed');
    button.classList.toggle('copied', copied);
    clearTimeout(state.statusTimer);
    state.statusTimer = setTimeout(() => {
      status.textContent = '';
      button.classList.remove('copied');
    }, 4000);
  }

  // ---- wiring -------------------------------------------------------------

  function chooseLayout(name) {
    const layout = findLayout(name);
    if (!layout || layout === state.layout) return;
    const carried = fieldValues();
    clearErrors();
    state.layout = layout;
    $('#layout').value = layout.name;
    renderFields(carried);
    renderLayoutInfo();
  }

  function wire() {
    for (const button of document.querySelectorAll('.lang-switch button')) {
      button.addEventListener('click', () => setLang(button.dataset.lang));
    }
    $('#layout').addEventListener('change', (event) => {
      chooseLayout(event.target.value);
      const decoding = state.mode === 'decode' && $('#decode-input').value.trim() !== '';
      runNow(decoding ? decode : compose);
    });
    $('#compose-form').addEventListener('input', (event) => {
      if (event.target.matches('input')) schedule(compose);
    });
    $('#compose-form').addEventListener('submit', (event) => {
      event.preventDefault();
      runNow(compose);
    });
    $('#decode-input').addEventListener('input', () => schedule(decode));
    $('#decode-form').addEventListener('submit', (event) => {
      event.preventDefault();
      runNow(decode);
    });
    $('#generate-form').addEventListener('submit', (event) => {
      event.preventDefault();
      generate();
    });
    $('#generated').addEventListener('click', (event) => {
      const button = event.target.closest('button[data-id]');
      if (!button) return;
      if (state.generated) chooseLayout(state.generated.layout);
      $('#decode-input').value = button.dataset.id;
      runNow(decode);
      const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
      $('#result').scrollIntoView({ block: 'nearest', behavior: reduce ? 'auto' : 'smooth' });
    });
    $('#copy-id').addEventListener('click', (event) => copyWithStatus($('#result-id').textContent, event.currentTarget));
    $('#copy-share').addEventListener('click', (event) => copyWithStatus($('#share-link').value, event.currentTarget));
    $('#share-link').addEventListener('focus', (event) => event.target.select());
  }

  async function start() {
    state.lang = initialLang();
    applyStrings();
    wire();

    let outcome;
    try {
      outcome = await request('/api/v1/layouts');
    } catch {
      outcome = { problem: { detail: t('error.network') } };
    }
    if (!outcome.data || !Array.isArray(outcome.data) || outcome.data.length === 0) {
      const detail = outcome.problem ? outcome.problem.detail : t('error.status', { status: '?' });
      const general = $('#compose-error');
      general.textContent = t('error.layouts', { detail });
      general.hidden = false;
      $('#result-placeholder').hidden = true;
      return;
    }
    state.layouts = outcome.data;

    // A share link restores its inputs: ?layout=…&timestamp=…&<field>=… or ?decode=ID.
    const query = new URLSearchParams(location.search);
    state.layout = findLayout(query.get('layout')) || findLayout('twitter') || state.layouts[0];
    renderLayoutOptions();
    renderLayoutInfo();
    const values = {};
    for (const [name] of state.layout.fields) if (query.has(name)) values[name] = query.get(name);
    renderFields(values);
    $('#input-timestamp').value = query.get('timestamp') || '';

    if (query.get('decode')) {
      $('#decode-input').value = query.get('decode');
      runNow(decode);
    } else {
      runNow(compose);
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
