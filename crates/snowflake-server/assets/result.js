// The result: the ID that Compose or Decode made, in every text form, its
// time in UTC and the chosen zone, and its 64 bits as one strip of labelled
// parts. The panel owns what is on screen: the last valid result, which form
// made it, and whether the input that followed failed.
import * as engine from './engine.js';
import { textForms } from './idtext.js';
import { STRINGS } from './strings.js';
import { el, nodes } from './dom.js';
import { floorSeconds, relative, unixText, zoned } from './time.js';

const FORMS = ['hex', 'base32', 'base62', 'base58'];

/**
 * The colour of a part: sign and time have their own, the sequence its own,
 * the node fields take the next of three in turn.
 */
export function segmentKind(layout, name) {
  if (name === engine.SIGN_FIELD || name === engine.UNUSED_FIELD) return 'seg-sign';
  if (name === engine.TIME_FIELD) return 'seg-time';
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
    this.$ = nodes({
      section: 'result',
      source: 'result-source',
      placeholder: 'result-placeholder',
      stale: 'result-stale',
      body: 'result-body',
      id: 'result-id',
      hex: 'result-hex',
      base32: 'result-base32',
      base62: 'result-base62',
      base58: 'result-base58',
      time: 'result-time',
      timeLabel: 'result-time-label',
      zonedRow: 'zoned-row',
      zonedLabel: 'result-zoned-label',
      zoned: 'result-zoned',
      relative: 'result-relative',
      unix: 'result-unix',
      discordRow: 'discord-row',
      discord: 'result-discord',
      bits: 'bits',
      toCompose: 'to-compose',
      undo: 'undo-compose',
      share: 'share-link',
    });
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
    const { layout } = result;
    $.source.textContent = prefs.t(this.mode === 'decode' ? 'result.decoded' : 'result.composed', { layout: engine.layoutName(layout) });
    const forms = textForms(result.id);
    $.id.textContent = result.id.toString();
    for (const form of FORMS) $[form].textContent = forms[form];
    $.time.textContent = engine.isoOf(result.timestampMs);
    const tz = prefs.zone();
    $.zonedRow.hidden = tz === 'UTC';
    $.timeLabel.textContent = `${prefs.t('result.time')} (UTC)`;
    $.zonedLabel.textContent = `${prefs.t('result.time')} (${tz})`;
    $.zoned.textContent = tz === 'UTC' ? '' : zoned(result.timestampMs, tz, prefs.lang);
    $.relative.textContent = relative(result.timestampMs, BigInt(Date.now()), prefs.lang);
    $.unix.textContent = `${unixText(result.timestampMs, prefs.unit())} ${prefs.unit()}`;
    // Discord writes times in chat as <t:seconds:R>.
    const discord = layout.name === 'discord';
    $.discordRow.hidden = !discord;
    $.discord.textContent = discord ? `<t:${floorSeconds(result.timestampMs)}:R>` : '';
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
          className: `segment ${segmentKind(result.layout, segment.name)}`,
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
