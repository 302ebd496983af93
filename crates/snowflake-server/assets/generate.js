// Generate: fresh IDs from the server's generator. Only the served page has
// an API (<html data-api>); the saved page says that Generate needs one.
import { el, nodes, whenSubmitted } from './dom.js';
import { errorBox } from './errors.js';

export class GeneratePanel {
  /** `api` is the API's base, or null; `onDecode(id, layoutName)` decodes a generated ID. */
  constructor(prefs, api, { onDecode }) {
    this.prefs = prefs;
    this.api = api;
    this.$ = nodes('generate', ['form', 'offline', 'count', 'submit', 'list']);
    this.error = errorBox(prefs, this.$.count);
    this.generated = null; // the server's last answer: { layout, ids }
    if (!api) {
      this.$.offline.hidden = false;
      return;
    }
    this.$.form.hidden = false;
    whenSubmitted(this.$.form, () => this.generate());
    this.$.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-id]');
      if (button) onDecode(button.dataset.id, this.generated ? this.generated.layout : null);
    });
  }

  async generate() {
    const { prefs, $ } = this;
    this.error.clear();
    $.submit.disabled = true;
    try {
      const response = await fetch(`${this.api}/ids?count=${encodeURIComponent($.count.value)}`, {
        method: 'POST',
        headers: { accept: 'application/json' },
      });
      const body = (response.headers.get('content-type') || '').includes('json') ? await response.json() : null;
      if (response.ok && body && Array.isArray(body.ids)) {
        this.generated = body;
        this.render();
      } else {
        this.error.show({ message: body && body.detail ? body.detail : prefs.t('error.status', { status: response.status }) });
      }
    } catch {
      this.error.show('error.network');
    } finally {
      $.submit.disabled = false;
    }
  }

  render() {
    const { prefs, generated } = this;
    if (!generated) {
      this.$.list.replaceChildren();
      return;
    }
    const caption = el('li', { className: 'generated-caption', text: prefs.t('generate.caption', { count: prefs.num(generated.ids.length), layout: generated.layout }) });
    const items = generated.ids.map((id) =>
      el('li', { className: 'generated-item' }, [
        el('code', { className: 'generated-id', text: id }),
        el('button', { type: 'button', className: 'link-button decode-generated', 'data-id': id, 'aria-label': prefs.t('generate.decodeLabel', { id }), text: prefs.t('generate.decode') }),
      ]),
    );
    this.$.list.replaceChildren(caption, ...items);
  }

  relabel() {
    this.error.relabel();
    this.render();
  }
}
