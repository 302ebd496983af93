// The result: the ID that Compose or Decode made, in every text form, its
// time in UTC and the chosen zone, and its 64 bits as one strip of labelled
// parts. The panel owns what is on screen: the last valid result, which form
// made it, and whether the input that followed failed.
import { limits } from './snowflake.js';
import { STRINGS } from './strings.js';
import { byId, el, nodes } from './dom.js';
import { floorSeconds, relative, unixText, zoned } from './time.js';

/**
 * One row for each text form of the core's breakdown (its `text`), before
 * the rows of times: drawn before the page's words and Copy buttons are
 * collected, so that they are worded and wired like the rest.
 */
export function drawFormRows() {
  const facts = byId('result-facts');
  const rows = limits().breakdown_forms.map((form) => {
    const key = `result.${form}`;
    const known = key in STRINGS.en;
    return el('div', {}, [
      el('dt', { 'data-i18n': known ? key : null, text: known ? STRINGS.en[key] : form }),
      el('dd', {}, [
        el('code', { id: `result-${form}` }),
        el('button', { type: 'button', className: 'copy-mini', 'data-copy': `result-${form}`, 'data-what': known ? key : null, text: 'Copy' }),
      ]),
    ]);
  });
  facts.prepend(...rows);
}

/**
 * The colour of a part: sign and time have their own, the sequence its own,
 * the node fields take the next of three in turn.
 */
export function segmentKind(layout, name) {
  const { segments } = limits();
  if (name === segments.sign || name === segments.unused) return 'seg-sign';
  if (name === segments.time) return 'seg-time';
  if (layout && name === layout.sequence) return 'seg-seq';
  const nodeFields = layout ? layout.fields.map((f) => f.name).filter((n) => n !== layout.sequence) : [];
  return `seg-f${(Math.max(0, nodeFields.indexOf(name)) % 3) + 1}`;
}

export class ResultPanel {
  /**
   * `marked()` tells whether an input above is marked as wrong, `canUndo()`
   * whether Compose has something to put back, `shareUrl()` the link to the
   * result on screen.
   */
  constructor(prefs, { marked, canUndo, shareUrl, onToCompose, onUndo }) {
    this.prefs = prefs;
    this.marked = marked;
    this.canUndo = canUndo;
    this.shareUrl = shareUrl;
    this.$ = {
      section: byId('result'),
      ...nodes('result', [
        'source', 'placeholder', 'stale', 'body',
        'id', 'time', 'timeLabel', 'zonedRow', 'zonedLabel', 'zoned', 'relative', 'unix', 'discordRow', 'discord',
        'bits', 'toCompose', 'undo', 'share',
      ]),
    };
    this.forms = limits().breakdown_forms.map((form) => [form, document.getElementById(`result-${form}`)]);
    this.result = null; // the last valid breakdown
    this.mode = 'compose'; // which form acted last: 'compose' or 'decode'
    this.composedFrom = null; // the resolved inputs of the last composed result, for the share link
    this.failed = false;
    this.$.toCompose.addEventListener('click', onToCompose);
    this.$.undo.addEventListener('click', onUndo);
    this.$.share.addEventListener('focus', () => this.$.share.select());
  }

  /** A form made a result (`decoded`), or failed (null): the last valid one stays beside a mark. */
  show(mode, outcome) {
    this.mode = mode;
    if (outcome) {
      this.result = outcome.decoded;
      if (mode === 'compose') this.composedFrom = outcome.composedFrom;
    }
    this.render(!outcome);
  }

  render(failed = this.failed) {
    this.failed = failed;
    const { result, prefs, $ } = this;
    $.section.dataset.state = failed ? 'error' : result ? 'ok' : 'empty';
    // The old result stays only beside a mark that says what to fix.
    const stale = failed && result && this.marked();
    const show = result && (!failed || stale);
    $.stale.hidden = !stale;
    $.placeholder.hidden = Boolean(show);
    $.placeholder.textContent = prefs.t(failed ? 'result.none' : 'result.placeholder');
    $.body.hidden = !show;
    if (!show) {
      $.source.textContent = '';
      return;
    }
    const layout = result.layoutUsed;
    const ms = BigInt(result.timestamp_ms);
    $.source.textContent = prefs.t(this.mode === 'decode' ? 'result.decoded' : 'result.composed', { layout: layout.name });
    $.id.textContent = result.id;
    for (const [form, node] of this.forms) node.textContent = result.text[form];
    $.time.textContent = result.time;
    const tz = prefs.zone();
    $.zonedRow.hidden = tz === 'UTC';
    $.timeLabel.textContent = `${prefs.t('result.time')} (UTC)`;
    $.zonedLabel.textContent = `${prefs.t('result.time')} (${tz})`;
    $.zoned.textContent = tz === 'UTC' ? '' : zoned(ms, tz, prefs.lang);
    $.relative.textContent = relative(ms, BigInt(Date.now()), prefs.lang);
    $.unix.textContent = `${unixText(ms, prefs.unit())} ${prefs.unit()}`;
    // Discord writes times in chat as <t:seconds:R>.
    const discord = layout.name === 'discord';
    $.discordRow.hidden = !discord;
    $.discord.textContent = discord ? `<t:${floorSeconds(ms)}:R>` : '';
    $.toCompose.hidden = this.mode !== 'decode';
    $.undo.hidden = !this.canUndo();
    this.renderBits(result);
    $.share.value = this.shareUrl();
  }

  /** Scrolls the result into view, if it is not. */
  reveal() {
    this.$.section.scrollIntoView({ block: 'nearest' });
  }

  // The 64 bits as one strip of labelled parts, most significant first.
  renderBits(result) {
    const { prefs } = this;
    let high = 64;
    const parts = result.segments.map((segment) => {
      const shift = high - segment.bits;
      high = shift;
      const part = el(
        'div',
        {
          className: `segment ${segmentKind(result.layoutUsed, segment.name)}`,
          role: 'listitem',
          'data-name': segment.name,
          'data-bits': String(segment.bits),
          'data-value': segment.value.toString(),
        },
        [
          el('span', { className: 'segment-head' }, [
            el('span', { className: 'segment-name', text: segmentLabel(prefs, segment.name) }),
            shift > 0 ? el('span', { className: 'segment-shift', text: `<< ${shift}` }) : '',
          ]),
          el('code', { className: 'segment-binary', text: segment.binary }),
          el('span', { className: 'segment-meta' }, [
            el('span', { className: 'segment-bits', text: prefs.bits(segment.bits) }),
            el('span', { className: 'segment-value', text: segment.value.toString() }),
          ]),
        ],
      );
      part.style.setProperty('--bits', String(segment.bits));
      return part;
    });
    this.$.bits.replaceChildren(...parts);
  }
}

function segmentLabel(prefs, name) {
  const key = `segment.${name}`;
  return key in STRINGS[prefs.lang] || key in STRINGS.en ? prefs.t(key) : name;
}
