// Share links: the URL that brings back the result on screen, as typed.
// ?layout=…[&spec&epoch&tick]&timestamp=…&<field>=… for a composed ID,
// ?layout=…&decode=ID for a decoded one; the language goes along.

/**
 * The link for a result. `layoutParams(params)` adds the layout's; `mode`
 * is the form that made it; `composedFrom` the resolved time and values of
 * a composed one, not the input: an empty time means "now", and a link
 * should show the same ID tomorrow.
 */
export function shareUrl({ result, mode, composedFrom, layoutParams, lang }) {
  if (!result) return '';
  const params = new URLSearchParams();
  layoutParams(params);
  if (mode === 'decode') {
    params.set('decode', result.id.toString());
  } else if (composedFrom) {
    params.set('timestamp', composedFrom.ts.toString());
    for (const [name, value] of Object.entries(composedFrom.values)) params.set(name, value.toString());
  }
  params.set('lang', lang);
  const base = location.protocol === 'file:' ? location.href.split(/[?#]/)[0] : `${location.origin}${location.pathname}`;
  return `${base}?${params}`;
}
