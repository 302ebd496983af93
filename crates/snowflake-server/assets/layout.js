// The layout in use: a preset from the core's table, or a custom one from a
// spec, an epoch and a tick, which the core reads as the command reads
// --layout, --epoch and --tick-ms. This panel owns the choice and tells the
// page when the layout changes; it is null while a custom spec does not parse.
import { formatTime, parseLayout, presets } from './snowflake.js';
import { platformLabel } from './strings.js';
import { el, fill, nodes } from './dom.js';
import { parseTime } from './time.js';
import { PageError, errorBoxes } from './errors.js';

const CUSTOM = 'custom';

export class LayoutPanel {
  constructor(prefs, { onChange }) {
    this.prefs = prefs;
    this.presets = presets();
    this.names = this.presets.map((layout) => layout.name);
    this.onChange = onChange;
    this.$ = nodes('layout', ['select', 'info', 'customBox', 'spec', 'epoch', 'tick']);
    this.errors = errorBoxes(prefs, this.$, ['spec', 'epoch', 'tick']);
    this.layout = null;
    this.$.select.addEventListener('change', () => this.change());
    for (const input of [this.$.spec, this.$.epoch, this.$.tick]) input.addEventListener('input', () => this.change());
  }

  hasErrors() {
    return Object.values(this.errors).some((box) => box.shown);
  }

  /** Reads the choice again and tells the page: (layout before, layout now). */
  change() {
    if (this.$.select.value === CUSTOM && this.$.spec.value.trim() === '' && this.layout) {
      // Start a custom layout from the one in use.
      this.$.spec.value = this.layout.spec;
      this.$.epoch.value = this.layout.epochMs.toString();
      this.$.tick.value = this.layout.tickMs.toString();
    }
    const before = this.layout;
    this.resolve();
    this.onChange(before, this.layout);
  }

  resolve() {
    const choice = this.$.select.value;
    this.$.customBox.hidden = choice !== CUSTOM;
    if (choice !== CUSTOM) for (const box of Object.values(this.errors)) box.clear();
    this.layout = choice === CUSTOM ? this.custom() : this.preset(choice);
    this.renderInfo();
    return this.layout;
  }

  /** A preset by name, or null. */
  preset(name) {
    return this.presets.find((layout) => layout.name === name) ?? null;
  }

  // The custom layout from its three inputs, or null with the error marked
  // beside the input it blames. An empty epoch or tick keeps the spec's own.
  custom() {
    for (const box of Object.values(this.errors)) box.clear();
    const options = {};
    const epochText = this.$.epoch.value.trim();
    if (epochText !== '') {
      // A date in the chosen zone is the page's to read; the core takes ms.
      options.epoch = parseTime(epochText, 'ms', this.prefs.zone());
      if (options.epoch === null) {
        // The spec's own mistake comes first, as the core reads it first.
        try {
          parseLayout(this.$.spec.value.trim());
          this.errors.epoch.show(new PageError('epoch.notATime', 'epoch', epochText));
        } catch (error) {
          this.errors.spec.show(error);
        }
        return null;
      }
    }
    const tickText = this.$.tick.value.trim();
    if (tickText !== '') options.tickMs = tickText;
    try {
      return parseLayout(this.$.spec.value.trim(), options);
    } catch (error) {
      const box = error.field === 'epoch' ? 'epoch' : error.field === 'tick_ms' ? 'tick' : 'spec';
      this.errors[box].show(error);
      return null;
    }
  }

  renderOptions() {
    const chosen = this.$.select.value;
    this.$.select.replaceChildren(
      ...this.presets.map((layout) => el('option', { value: layout.name, text: `${layout.name} · ${platformLabel(this.prefs.lang, layout)}` })),
      el('option', { value: CUSTOM, text: this.prefs.t('layout.custom') }),
    );
    if (chosen) this.$.select.value = chosen;
  }

  renderInfo() {
    const { layout, prefs } = this;
    if (!layout) {
      this.$.info.textContent = '';
      return;
    }
    const ids = layout.idsPerMs === null ? '—' : prefs.num(layout.idsPerMs, { maximumFractionDigits: 2 });
    fill(this.$.info, prefs.template('layout.info'), {
      epoch: formatTime(layout.epochMs),
      tick: prefs.num(layout.tickMs),
      last: formatTime(layout.lastMs),
      ids,
      nodes: prefs.num(layout.nodes),
      bits: prefs.t(layout.jsSafe ? 'layout.jsSafe' : 'layout.notJsSafe'),
    });
  }

  relabel() {
    this.renderOptions();
    this.renderInfo();
    for (const box of Object.values(this.errors)) box.relabel();
  }

  /** Chooses a preset by name, as if picked from the list. */
  choose(name) {
    this.$.select.value = name;
    this.change();
  }

  /** The inputs as typed, for Undo and share links. */
  snapshot() {
    return { layout: this.$.select.value, spec: this.$.spec.value, epoch: this.$.epoch.value, tick: this.$.tick.value };
  }

  /** Puts typed inputs back and reads them, without telling the page. */
  restoreSnapshot(saved) {
    this.$.select.value = saved.layout;
    this.$.spec.value = saved.spec;
    this.$.epoch.value = saved.epoch;
    this.$.tick.value = saved.tick;
    return this.resolve();
  }

  /** The layout as a share link states it: ?layout=…[&spec&epoch&tick]. */
  params(params) {
    const choice = this.$.select.value;
    params.set('layout', choice);
    if (choice === CUSTOM) {
      params.set('spec', this.$.spec.value.trim());
      if (this.$.epoch.value.trim()) params.set('epoch', this.$.epoch.value.trim());
      if (this.$.tick.value.trim()) params.set('tick', this.$.tick.value.trim());
    }
  }

  /** The layout a link names, or the first preset; read without telling the page. */
  restore(query) {
    this.renderOptions();
    const wanted = (query.get('layout') || this.names[0]).toLowerCase();
    if (wanted === CUSTOM) {
      this.restoreSnapshot({ layout: CUSTOM, spec: query.get('spec') || '', epoch: query.get('epoch') || '', tick: query.get('tick') || '' });
    } else {
      this.$.select.value = this.names.includes(wanted) ? wanted : this.names[0];
      this.resolve();
    }
    return this.layout;
  }
}
