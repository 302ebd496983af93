// Small DOM helpers the panels share: building nodes, filling a sentence
// into a node, looking a panel's nodes up once, when it is made, and
// handling a panel's form in the page.

/** A new element with attributes (`text` and `className` set properties) and children. */
export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (key === 'text') node.textContent = value;
    else if (key === 'className') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

/** The element with this id; a missing one fails at once, naming it. */
export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no element #${id}`);
  return node;
}

/**
 * A panel's nodes by the names it uses. The page gives a panel's elements
 * the ids `<panel>-<name>`, the name in kebab-case, and an input's hint and
 * error box its own id and `-hint`, `-error`: `nodes('unmask', ['key',
 * 'inputHint'])` gives `{ key: #unmask-key, inputHint: #unmask-input-hint }`.
 * A missing id fails at once, rather than when someone first uses the panel.
 */
export function nodes(panel, names) {
  const kebab = (name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return Object.fromEntries(names.map((name) => [name, byId(`${panel}-${kebab(name)}`)]));
}

/**
 * Runs `action` when `form` is submitted, instead of sending it: no form on
 * the page goes anywhere (the unmask key least of all), so every panel's
 * form is wired here.
 */
export function whenSubmitted(form, action) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    action();
  });
}

/** A sentence with {placeholders} into a node, each value in a span that does not wrap. */
export function fill(node, template, vars) {
  const parts = template.split(/\{(\w+)\}/);
  node.replaceChildren(...parts.map((part, i) => (i % 2 === 1 && part in vars ? el('span', { className: 'nowrap', text: String(vars[part]) }) : part)));
}
