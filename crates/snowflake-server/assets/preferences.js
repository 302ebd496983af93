// The reader's preferences: the page's language, the theme, the time zone
// and the unit of Unix times, each remembered (store.js). This module owns
// them, words the page's fixed text, and tells the panels when one changes;
// the panels ask it for words (t, num, message), the zone and the unit.
import { LANGS, STRINGS, translate, errorMessage, fieldLabel } from './strings.js';
import { el, nodes } from './dom.js';
import { recall, remember } from './store.js';
import { localZone, validZone } from './time.js';
import { PageError, errorBox } from './errors.js';

export class Preferences {
  constructor() {
    this.$ = nodes('settings', ['theme', 'zone', 'zoneLocal', 'zoneNameBox', 'zoneName', 'zoneList', 'unit']);
    this.langButtons = [...document.querySelectorAll('.lang-switch button')];
    this.texts = [...document.querySelectorAll('[data-i18n]')];
    this.markup = [...document.querySelectorAll('[data-i18n-html]')];
    this.attributes = [...document.querySelectorAll('[data-i18n-attr]')];
    this.zoneError = errorBox(this, this.$.zoneName);
    this.lang = 'en';
    this.listeners = { lang: [], zone: [], unit: [] };

    for (const button of this.langButtons) button.addEventListener('click', () => this.setLang(button.dataset.lang));
    this.$.theme.addEventListener('change', () => {
      this.applyTheme(this.$.theme.value);
      remember('theme', this.$.theme.value);
    });
    this.$.zone.addEventListener('change', () => {
      if (this.$.zone.value === 'other') this.fillZoneList();
      this.applyZone();
    });
    this.$.zoneName.addEventListener('input', () => this.applyZone());
    this.$.unit.addEventListener('change', () => {
      const from = this.unit() === 's' ? 'ms' : 's';
      remember('unit', this.unit());
      this.emit('unit', from);
    });
  }

  /** Calls `fn` when `lang`, `zone` or `unit` changes (`unit` passes the unit before). */
  listen(what, fn) {
    this.listeners[what].push(fn);
  }

  emit(what, detail) {
    for (const fn of this.listeners[what]) fn(detail);
  }

  /** A string of the interface in the page's language. */
  t(key, vars) {
    return translate(this.lang, key, vars);
  }

  /** A sentence's template in the page's language, for dom.fill. */
  template(key) {
    return STRINGS[this.lang][key] ?? STRINGS.en[key] ?? key;
  }

  num(value, options) {
    return new Intl.NumberFormat(this.lang, options).format(value);
  }

  bits(n) {
    return n === 1 ? this.t('bits.one') : this.t('bits.many', { n });
  }

  /** A message for an error box: a message key, a page's mistake, or anything with a message (the core's errors). */
  message(error) {
    if (typeof error === 'string') return this.t(error);
    if (error instanceof PageError) return errorMessage(this.lang, error, { unit: this.unit() });
    const message = String(error.message || error);
    // The core words its errors in English, as the command and the API do;
    // a page in another language says first, in its own words, which input
    // is at fault.
    if (this.lang !== 'en' && error.field) {
      return this.t('error.core', { field: fieldLabel(this.lang, error.field), message });
    }
    return message;
  }

  unit() {
    return this.$.unit.value === 's' ? 's' : 'ms';
  }

  unitWord() {
    return this.t(this.unit() === 's' ? 'unit.s' : 'unit.ms');
  }

  /** The zone times are shown and read in; while a typed name is not a zone yet, UTC. */
  zone() {
    const choice = this.$.zone.value;
    if (choice === 'local') return localZone();
    if (choice === 'other') {
      const name = this.$.zoneName.value.trim();
      return name && validZone(name) ? name : 'UTC';
    }
    return 'UTC';
  }

  /** Theme, unit, zone and language as remembered, or as a link asks. */
  restore(query) {
    this.applyTheme(recall('theme'));
    if (recall('unit') === 's') this.$.unit.value = 's';
    const zone = recall('zone');
    if (zone === 'local' || zone === 'UTC') this.$.zone.value = zone;
    else if (zone && validZone(zone)) {
      this.$.zone.value = 'other';
      this.$.zoneName.value = zone;
      this.$.zoneNameBox.hidden = false;
    }
    this.lang = this.initialLang(query);
  }

  initialLang(query) {
    const fromQuery = query.get('lang');
    if (LANGS.includes(fromQuery)) return fromQuery;
    const remembered = recall('lang');
    if (LANGS.includes(remembered)) return remembered;
    // The server picks from Accept-Language; a saved page leaves it to the browser.
    const html = document.documentElement;
    const fromHtml = (html.lang || '').slice(0, 2).toLowerCase();
    if (!html.hasAttribute('data-lang-auto') && LANGS.includes(fromHtml)) return fromHtml;
    const fromBrowser = (navigator.language || '').slice(0, 2).toLowerCase();
    return LANGS.includes(fromBrowser) ? fromBrowser : 'en';
  }

  setLang(lang) {
    if (!LANGS.includes(lang)) return;
    this.lang = lang;
    remember('lang', lang);
    this.emit('lang', lang);
  }

  /** The page's fixed text in the page's language; the panels word their own. */
  relabel() {
    document.documentElement.lang = this.lang;
    document.title = this.t('doc.title');
    for (const node of this.texts) {
      const text = this.t(node.dataset.i18n);
      // The language buttons keep their visible code; only the hidden name changes.
      node.textContent = node.classList.contains('sr-only') ? ` ${text}` : text;
    }
    for (const node of this.markup) node.innerHTML = this.t(node.dataset.i18nHtml);
    for (const node of this.attributes) {
      for (const pair of node.dataset.i18nAttr.split(';')) {
        const [attr, key] = pair.split(':');
        node.setAttribute(attr, this.t(key));
      }
    }
    for (const button of this.langButtons) button.setAttribute('aria-pressed', String(button.dataset.lang === this.lang));
    // A new option rather than new text: Chromium sizes a select by its
    // options when they come and go, but not always when their text changes.
    const local = el('option', { value: 'local', id: this.$.zoneLocal.id, text: this.t('zone.local', { zone: localZone() }) });
    local.selected = this.$.zoneLocal.selected;
    this.$.zoneLocal.replaceWith(local);
    this.$.zoneLocal = local;
    this.zoneError.relabel();
  }

  applyTheme(choice) {
    const theme = ['light', 'dark'].includes(choice) ? choice : 'system';
    this.$.theme.value = theme;
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
  }

  applyZone() {
    const other = this.$.zone.value === 'other';
    this.$.zoneNameBox.hidden = !other;
    this.zoneError.clear();
    if (other) {
      const name = this.$.zoneName.value.trim();
      if (name && !validZone(name)) this.zoneError.show({ message: this.t('zone.bad', { value: name }) });
      else if (name) remember('zone', name);
    } else {
      remember('zone', this.$.zone.value);
    }
    this.emit('zone');
  }

  fillZoneList() {
    const list = this.$.zoneList;
    if (list.childElementCount || typeof Intl.supportedValuesOf !== 'function') return;
    list.replaceChildren(...Intl.supportedValuesOf('timeZone').map((z) => el('option', { value: z })));
  }
}
