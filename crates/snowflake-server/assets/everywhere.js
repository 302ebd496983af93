// One ID under every preset: a table with each reading's time and verdict
// (possible, implausible or impossible), judged as the core judges it, by
// the presets the core's table gives (Presets.decodeEverywhere).
import { isoOf } from './engine.js';
import { platformLabel } from './strings.js';
import { el, nodes } from './dom.js';

export class EverywherePanel {
  constructor(prefs, presets) {
    this.prefs = prefs;
    this.presets = presets;
    this.$ = nodes({ section: 'everywhere', rows: 'everywhere-rows' });
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
    const rows = this.presets.decodeEverywhere(this.id, BigInt(Date.now())).map((row) => {
      const name = row.layout.name;
      const platform = platformLabel(prefs.lang, row.layout);
      const reason = row.reason === 'beforePlatform' ? prefs.t('reason.beforePlatform', { platform }) : row.reason ? prefs.t(`reason.${row.reason}`) : '';
      return el('tr', { 'data-layout': name, 'data-verdict': row.verdict }, [
        el('th', { scope: 'row', text: name }),
        el('td', { text: platform }),
        el('td', {}, [el('code', { text: row.decoded ? isoOf(row.decoded.timestampMs) : '—' })]),
        el('td', {}, [
          el('span', { className: `verdict verdict-${row.verdict}`, text: prefs.t(`verdict.${row.verdict}`) }),
          reason ? el('span', { className: 'verdict-reason', text: ` · ${reason}` }) : '',
        ]),
      ]);
    });
    $.rows.replaceChildren(...rows);
  }

  relabel() {
    this.render();
  }
}
