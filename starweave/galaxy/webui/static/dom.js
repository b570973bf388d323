/* Small helpers shared by the page's modules. Server text only ever goes through textContent
 * (never innerHTML): task results and device names are untrusted. */

const SVG_NS = "http://www.w3.org/2000/svg";

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (name === "className") node.className = value;
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

export function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

// Server times are epoch seconds (events) or ISO strings (tasks); milliseconds are accepted too.
export function toDate(value) {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value === "number") return new Date(value > 1e12 ? value : value * 1000);
  const date = new Date(value);
  return isNaN(date.getTime()) ? null : date;
}

export function timeText(value) {
  const date = toDate(value);
  return date ? date.toLocaleTimeString() : "";
}

export function show(value) {
  if (value === undefined || value === null || value === "") return "—";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch (err) {
    return String(value);
  }
}
