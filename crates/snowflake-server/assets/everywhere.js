// One ID under every preset: a table with each reading's time and verdict
// (possible, implausible or impossible) and the core's reason for it, as
// the core reads it (the API's ?layout=all).
import { presets, readings } from './snowflake.js';
import { platformLabel } from './strings.js';
import { byId, el, nodes } from './dom.js';

export class EverywherePanel {
  constructor(prefs) {
    this.prefs = prefs;
    this.presets = new Map(presets().map((layout) => [layout.name, layout]));
    this.$ = { section: byId('everywhere'), ...nodes('everywhere', ['rows']) };
    this.id = null;
  }

  /** Shows the table for an ID, or hides it for null. */
  show(id) {
    this.id = id ?? null;
    this.render();
  }

  render() {
    const { prefs, $ } = this;
    if (this.id === null) {
      $.section.hidden = true;
      return;
    }
    $.section.hidden = false;
    const rows = readings(this.id).readings.map((row) => {
      const name = row.layout;
      const platform = platformLabel(prefs.lang, this.presets.get(name));
      return el('tr', { 'data-layout': name, 'data-verdict': row.verdict }, [
        el('th', { scope: 'row', text: name }),
        el('td', { text: platform }),
        el('td', {}, [el('code', { text: row.decoded ? row.decoded.time : '—' })]),
        el('td', {}, [
          el('span', { className: `verdict verdict-${row.verdict}`, text: prefs.t(`verdict.${row.verdict}`) }),
          row.reason ? el('span', { className: 'verdict-reason', text: ` · ${row.reason}` }) : '',
        ]),
      ]);
    });
    $.rows.replaceChildren(...rows);
  }

  relabel() {
    this.render();
  }
}
