// The page's controller and entry point. It starts the page's model, the
// core compiled to WebAssembly, from the bytes in the page's data block;
// then makes one object per panel and wires them: which panel's change
// redraws which, and what a share link restores. Each panel owns its nodes
// and its state; nothing here touches the DOM but the data block. Compose,
// decode, ranges, bulk decode and unmasking run in the browser with no
// request; only Generate asks the server, and only when the page was served
// by one (<html data-api>). The same code runs from a saved file.
import { init } from './snowflake.js';
import { Preferences } from './preferences.js';
import { Copier } from './copy.js';
import { LayoutPanel } from './layout.js';
import { ComposePanel } from './compose.js';
import { ResultPanel, drawFormRows } from './result.js';
import { DecodePanel } from './decode.js';
import { EverywherePanel } from './everywhere.js';
import { RangePanel } from './range.js';
import { BulkPanel } from './bulk.js';
import { UnmaskPanel } from './unmask.js';
import { GeneratePanel } from './generate.js';
import { shareUrl } from './share.js';

// The module's bytes, gzipped and in base64 in a data block: the page is
// one document, from the server and from a saved file alike.
async function moduleBytes() {
  const packed = Uint8Array.from(atob(document.getElementById('snowflake-wasm').textContent.trim()), (c) => c.charCodeAt(0));
  const unpacked = new Blob([packed]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(unpacked).arrayBuffer();
}

moduleBytes().then(init).then(start);

// Everything the page does, once the model runs.
function start() {
  drawFormRows();
  const prefs = new Preferences();
  const copier = new Copier(prefs);

  const layout = new LayoutPanel(prefs, { onChange: layoutChanged });
  const compose = new ComposePanel(prefs, { onSubmit: composeNow });
  const decode = new DecodePanel(prefs, { onDecode: decodeNow });
  const result = new ResultPanel(prefs, {
    // Marks that the result depends on; the range, bulk, zone and generate forms have their own.
    marked: () => layout.hasErrors() || compose.hasErrors() || decode.hasErrors(),
    canUndo: () => compose.canUndo,
    shareUrl: () => shareUrl({ result: result.result, mode: result.mode, composedFrom: result.composedFrom, layoutParams: (p) => layout.params(p), lang: prefs.lang }),
    onToCompose: loadIntoCompose,
    onUndo: undoCompose,
  });
  const everywhere = new EverywherePanel(prefs);
  const range = new RangePanel(prefs, { layout: () => layout.layout });
  const bulk = new BulkPanel(prefs, copier, { layout: () => layout.layout, format: () => decode.format() });
  const unmask = new UnmaskPanel(prefs, copier, { layout: () => layout.layout, onDecode: decodeListed });
  const generate = new GeneratePanel(prefs, document.documentElement.dataset.api || null, { onDecode: decodeListed });

  function composeNow() {
    result.show('compose', compose.compose());
  }

  function decodeNow() {
    if (!layout.layout) {
      decode.clearError();
      result.show('decode', null);
      return;
    }
    const { id, decoded } = decode.decode(layout.layout);
    everywhere.show(id);
    result.show('decode', decoded ? { decoded } : null);
  }

  // The form that made the result makes it again: a decoded ID stays decoded.
  function recompute() {
    if (result.mode === 'decode' && decode.text() !== '') decodeNow();
    else composeNow();
  }

  function layoutChanged() {
    compose.setLayout(layout.layout);
    unmask.relabelLayout();
    recompute();
  }

  // Loads the decoded parts into Compose, keeping what was there for Undo.
  function loadIntoCompose() {
    if (!result.result || result.mode !== 'decode') return;
    compose.load(result.result, layout.snapshot());
    composeNow();
    copier.announce(prefs.t('result.loaded'));
    compose.focus();
  }

  function undoCompose() {
    const saved = compose.takeUndo();
    if (!saved) return;
    compose.putBack(saved, layout.restoreSnapshot(saved.layoutInputs));
    unmask.relabelLayout();
    composeNow();
    copier.announce(prefs.t('result.restored'));
    compose.focus();
  }

  // An ID from a list (generated, or unmasked) into Decode, under its layout.
  function decodeListed(id, layoutName) {
    if (layoutName && layout.preset(layoutName)) layout.choose(layoutName);
    decode.set(id);
    decodeNow();
    result.reveal();
  }

  // Every word on the page in the language now chosen.
  function relabel() {
    prefs.relabel();
    copier.relabel();
    layout.relabel();
    compose.relabel();
    range.relabel();
    decode.relabel();
    result.render();
    everywhere.relabel();
    bulk.relabel();
    unmask.relabel();
    generate.relabel();
  }

  prefs.listen('lang', relabel);
  prefs.listen('zone', () => {
    if (result.result) result.render();
  });
  prefs.listen('unit', (from) => {
    compose.convertUnit(from);
    relabel();
    recompute();
  });

  // A share link restores its inputs: ?layout=…[&spec&epoch&tick]&timestamp=…&<field>=… or ?decode=ID.
  const query = new URLSearchParams(location.search);
  prefs.restore(query);
  compose.setLayout(layout.restore(query));
  compose.restore(query);
  relabel();
  if (query.get('decode')) {
    decode.set(query.get('decode'));
    decodeNow();
  } else {
    composeNow();
  }
}
