// IDs of a time range: the first and last ID the layout can make between two
// times, for WHERE id BETWEEN first AND last.
import { bounds, timeUnits } from './snowflake.js';
import { nodes, whenSubmitted } from './dom.js';
import { parseTime } from './time.js';
import { PageError, errorBoxes } from './errors.js';

export class RangePanel {
  /** `layout()` is the layout in use, or null. */
  constructor(prefs, { layout }) {
    this.prefs = prefs;
    this.layout = layout;
    this.$ = nodes('range', ['form', 'from', 'to', 'hint', 'result', 'first', 'last', 'sql']);
    this.errors = errorBoxes(prefs, this.$, ['from', 'to']);
    whenSubmitted(this.$.form, () => this.find());
  }

  find() {
    this.errors.from.clear();
    this.errors.to.clear();
    this.$.result.hidden = true;
    const layout = this.layout();
    if (!layout) return;
    const times = {};
    for (const name of ['from', 'to']) {
      const text = this.$[name].value.trim();
      times[name] = parseTime(text, this.prefs.unit(), this.prefs.zone());
      if (times[name] === null) this.errors[name].show(new PageError('timestamp.notATime', name, text));
    }
    if (times.from === null || times.to === null) return;
    // Each end checked on its own first, so that a time the layout cannot
    // hold is marked beside its own input; then the window as a whole.
    for (const name of ['from', 'to']) {
      try {
        timeUnits(layout, times[name]);
      } catch (error) {
        this.errors[name].show(error);
      }
    }
    if (this.errors.from.shown || this.errors.to.shown) return;
    let found;
    try {
      found = bounds(times.from, times.to, layout);
    } catch (error) {
      this.errors.from.show(error);
      return;
    }
    this.$.first.textContent = found.first;
    this.$.last.textContent = found.last;
    this.$.sql.textContent = `WHERE id BETWEEN ${found.first} AND ${found.last}`;
    this.$.result.hidden = false;
  }

  relabel() {
    this.$.hint.textContent = this.prefs.t('range.hint', { unit: this.prefs.unitWord() });
    this.errors.from.relabel();
    this.errors.to.relabel();
  }
}
