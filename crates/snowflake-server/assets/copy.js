// Copying to the clipboard. Every Copy button names the node it copies
// (data-copy) and what that is called (data-what); one listener serves them
// all, including those drawn later. What happened is announced in a live
// region, and read out by screen readers.
import { el, nodes } from './dom.js';

export class Copier {
  constructor(prefs) {
    this.prefs = prefs;
    this.$ = nodes('copy', ['status']);
    this.buttons = [...document.querySelectorAll('button[data-copy]')];
    this.timer = 0;
    document.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-copy]');
      if (button) this.copyFrom(button);
    });
  }

  /** Copies text; true when it reached the clipboard. */
  async copyText(text) {
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

  /** Copies a panel's rows as CSV and says in `node`, the panel's summary, whether they reached the clipboard. */
  async copyCsv(csv, node) {
    const copied = await this.copyText(csv);
    node.textContent = this.prefs.t(copied ? 'copy.done' : 'copy.failed', { what: 'CSV' });
  }

  /** Says something in the live region, for five seconds. */
  announce(text) {
    this.$.status.textContent = text;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.$.status.textContent = '';
    }, 5000);
  }

  async copyFrom(button) {
    const source = document.getElementById(button.dataset.copy);
    const text = source ? (source.value ?? source.textContent).trim() : '';
    if (!text) return;
    const copied = await this.copyText(text);
    const what = this.prefs.t(button.dataset.what);
    this.announce(this.prefs.t(copied ? 'copy.done' : 'copy.failed', { what }));
  }

  relabel() {
    for (const button of this.buttons) {
      if (button.dataset.i18n) continue;
      button.textContent = this.prefs.t('copy');
      button.setAttribute('aria-label', this.prefs.t('copy.label', { what: this.prefs.t(button.dataset.what) }));
    }
    this.$.status.textContent = '';
  }
}
