/**
 * Building DOM without innerHTML: every string from the API lands in a text node or an attribute,
 * so nothing it says can become markup or script.
 */

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * `h("a", {href: "#/runs", class: "x"}, "Runs")`. Attributes: `class`, `for`, `aria-*`, `data-*` and
 * the rest as attributes; `on: {click: fn}` adds listeners; a `false`, `null` or `undefined` value is
 * left out, `true` sets a boolean attribute. Children: nodes, strings, numbers, arrays; null is skipped.
 */
export function h(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** As `h`, in the SVG namespace. */
export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

function fill(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (name === "on") {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (value === false || value === null || value === undefined) {
      continue;
    } else if (name === "value" && "value" in element) {
      element.value = String(value);
    } else if (name === "checked" || name === "selected") {
      element[name] = Boolean(value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/** Appends nodes, strings and (nested) arrays of them; skips null, undefined and false. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/** Replaces the element's children. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** A labelled form field: `<label for=id>Label</label>` + the control (+ an optional hint tied by aria-describedby). */
export function field(label, control, hint) {
  const id = control.id || (control.id = `f-${Math.random().toString(36).slice(2, 9)}`);
  const hintNode = hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null;
  if (hintNode) control.setAttribute("aria-describedby", hintNode.id);
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hintNode);
}

/** `<option>`s from `[value, label]` pairs or plain values; `selected` picks the current one. */
export function options(values, selected) {
  return values.map((v) => {
    const [value, label] = Array.isArray(v) ? v : [v, v];
    return h("option", { value, selected: value === selected }, label);
  });
}

/** A definition list from `[term, description]` pairs; a null description is skipped. */
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(([, d]) => d !== null && d !== undefined).map(([t, d]) => [h("dt", {}, t), h("dd", {}, d)]));
}
