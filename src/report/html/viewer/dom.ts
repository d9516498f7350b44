/// <reference lib="dom" />
// The page's only way to make elements: text always goes in as text nodes, attributes only from a
// fixed list, so nothing from the report can become markup, a handler, a link or a style.

type Child = Node | string | number | null | undefined | false | Child[];

const ATTRIBUTES = new Set([
  'class',
  'title',
  'type',
  'value',
  'placeholder',
  'aria-label',
  'aria-pressed',
  'colspan',
]);

/** An element with attributes (from ATTRIBUTES or data-*) and children (strings become text nodes). */
export function h(
  tag: string,
  attrs: Record<string, string | undefined> | null,
  ...children: Child[]
): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined) continue;
    if (!ATTRIBUTES.has(name) && !name.startsWith('data-'))
      throw new Error(`attribute ${name} is not allowed`);
    el.setAttribute(name, value);
  }
  append(el, children);
  return el;
}

/** Appends children as nodes; strings and numbers as text. */
export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else
      el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}
