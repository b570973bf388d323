/* The constellation panel: the DAG drawn as SVG with a layered layout (topological layers left to
 * right, edges as curves with arrowheads), nodes coloured by status, and a task's details. */

import { $, show, svg, timeText } from "./dom.js";

const NODE_W = 170, NODE_H = 46, COL_GAP = 70, ROW_GAP = 22, PAD = 16;

// The reference's status normaliser, keeping waiting/cancelled/skipped apart for the colours.
export function taskStatus(raw) {
  const s = String(raw || "pending").toLowerCase().replace(/^taskstatus\./, "");
  if (["completed", "complete", "success", "succeeded", "done"].includes(s)) return "completed";
  if (["running", "in_progress", "active", "started"].includes(s)) return "running";
  if (["failed", "error"].includes(s)) return "failed";
  if (["cancelled", "canceled"].includes(s)) return "cancelled";
  if (s === "skipped") return "skipped";
  if (["waiting_dependency", "waiting"].includes(s)) return "waiting_dependency";
  return "pending";
}

function listOf(value, idKey) {
  if (!value) return [];
  if (Array.isArray(value)) return value;
  return Object.entries(value).map(([id, item]) => Object.assign({ [idKey]: id }, item));
}

export function normalizeConstellation(c) {
  const tasks = {};
  for (const t of listOf(c.tasks, "task_id")) {
    const id = t.task_id || t.id;
    if (!id) continue;
    tasks[id] = Object.assign({}, t, { task_id: id, status: taskStatus(t.status) });
  }
  const deps = [];
  for (const d of listOf(c.dependencies, "line_id")) {
    const from = d.from_task_id || d.from || d.source;
    const to = d.to_task_id || d.to || d.target;
    if (tasks[from] && tasks[to]) deps.push({ from: from, to: to, type: d.dependency_type || d.type || "" });
  }
  return { id: c.constellation_id || c.id || "", name: c.name || "", state: c.state || "", tasks: tasks, deps: deps };
}

// Layers by longest path from the sources (Kahn's order), so every edge points left to right.
function layout(c) {
  const ids = Object.keys(c.tasks);
  const indeg = {}, succ = {}, layer = {};
  for (const id of ids) { indeg[id] = 0; succ[id] = []; layer[id] = 0; }
  for (const d of c.deps) { indeg[d.to] += 1; succ[d.from].push(d.to); }
  const queue = ids.filter((id) => indeg[id] === 0);
  const seen = new Set();
  while (queue.length) {
    const id = queue.shift();
    seen.add(id);
    for (const next of succ[id]) {
      layer[next] = Math.max(layer[next], layer[id] + 1);
      indeg[next] -= 1;
      if (indeg[next] === 0) queue.push(next);
    }
  }
  // A cycle should never reach the page; if it does, put the leftovers in one last column.
  const maxLayer = Math.max(0, ...ids.filter((id) => seen.has(id)).map((id) => layer[id]));
  for (const id of ids) if (!seen.has(id)) layer[id] = maxLayer + 1;
  const columns = [];
  for (const id of ids) (columns[layer[id]] = columns[layer[id]] || []).push(id);
  // Within a column, order nodes by the mean row of their predecessors (fewer crossings), then
  // by id in natural order (t2 before t10).
  const preds = {};
  for (const id of ids) preds[id] = [];
  for (const d of c.deps) preds[d.to].push(d.from);
  const row = {}, pos = {};
  const natural = (a, b) => a.localeCompare(b, undefined, { numeric: true });
  let rows = 0;
  columns.forEach((col, x) => {
    const weight = {};
    for (const id of col || []) {
      const placed = preds[id].filter((p) => p in row);
      weight[id] = placed.length ? placed.reduce((sum, p) => sum + row[p], 0) / placed.length : 0;
    }
    (col || []).sort((a, b) => weight[a] - weight[b] || natural(a, b)).forEach((id, y) => {
      row[id] = y;
      pos[id] = { x: PAD + x * (NODE_W + COL_GAP), y: PAD + y * (NODE_H + ROW_GAP) };
    });
    rows = Math.max(rows, (col || []).length);
  });
  return { pos: pos, width: PAD * 2 + columns.length * (NODE_W + COL_GAP) - COL_GAP,
    height: PAD * 2 + rows * (NODE_H + ROW_GAP) - ROW_GAP };
}

function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

export function renderDag(c, selectedTask) {
  const dag = $("dag"), edges = $("dag-edges"), nodes = $("dag-nodes");
  edges.replaceChildren();
  nodes.replaceChildren();
  const ids = c ? Object.keys(c.tasks) : [];
  $("dag-empty").hidden = ids.length > 0;
  $("constellation-name").textContent = c ? (c.name || c.id) + (c.state ? " · " + c.state : "") : "";
  dag.dataset.constellationId = c ? c.id : "";
  dag.dataset.state = c ? String(c.state) : "";
  renderStats(c);
  if (!ids.length) {
    dag.setAttribute("width", "0");
    dag.setAttribute("height", "0");
    return;
  }
  const { pos, width, height } = layout(c);
  dag.setAttribute("width", String(width));
  dag.setAttribute("height", String(height));
  dag.setAttribute("viewBox", "0 0 " + width + " " + height);
  // Shrink a wide DAG to the panel, down to half size; beyond that the panel scrolls.
  const avail = Math.max(100, $("dag-wrap").clientWidth - 4);
  const scale = Math.max(0.5, Math.min(1, avail / width));
  dag.style.width = width * scale + "px";
  dag.style.height = height * scale + "px";
  for (const d of c.deps) {
    const a = pos[d.from], b = pos[d.to];
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x - 2, y2 = b.y + NODE_H / 2;
    const mid = (x1 + x2) / 2;
    edges.append(svg("path", { class: "edge", "data-from": d.from, "data-to": d.to,
      d: `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`, "marker-end": "url(#arrow)" }));
  }
  for (const id of ids) {
    const t = c.tasks[id], p = pos[id];
    const g = svg("g", { class: "node status-" + t.status + (selectedTask === id ? " selected" : ""),
      "data-task-id": id, "data-status": t.status, transform: `translate(${p.x},${p.y})`,
      tabindex: "0", role: "button" });
    const title = svg("title", {});
    title.textContent = `${id}: ${t.description || t.name || ""} (${t.status})`;
    const label = svg("text", { x: 10, y: 19, class: "node-label" });
    label.textContent = truncate(t.name || id, 22);
    const sub = svg("text", { x: 10, y: 36, class: "node-sub" });
    const shown = t.status === "waiting_dependency" ? "waiting" : t.status;
    sub.textContent = truncate(`${t.target_device_id || "unassigned"} · ${shown}`, 26);
    g.append(title, svg("rect", { width: NODE_W, height: NODE_H, rx: 8, ry: 8 }), label, sub);
    nodes.append(g);
  }
}

function renderStats(c) {
  const counts = { total: 0, running: 0, completed: 0, failed: 0 };
  for (const t of Object.values(c ? c.tasks : {})) {
    counts.total += 1;
    if (t.status in counts) counts[t.status] += 1;
  }
  $("task-stats").textContent = c
    ? `${counts.completed}/${counts.total} done` + (counts.running ? `, ${counts.running} running` : "") +
      (counts.failed ? `, ${counts.failed} failed` : "")
    : "";
}

function answerText(result) {
  let value = result;
  for (let depth = 0; depth < 4 && value && typeof value === "object"; depth++) value = value.result;
  return typeof value === "string" && value !== "" && value !== result ? value : null;
}

export function renderDetails(t) {
  const panel = $("task-details");
  if (!t) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  panel.dataset.taskId = t.task_id;
  panel.dataset.status = t.status;
  $("detail-name").textContent = t.name || t.task_id;
  $("detail-status").textContent = t.status;
  $("detail-status").className = "badge status-" + t.status;
  $("detail-id").textContent = t.task_id;
  $("detail-description").textContent = show(t.description || t.task_description);
  $("detail-device").textContent = show(t.target_device_id);
  $("detail-start").textContent = timeText(t.execution_start_time) || "—";
  $("detail-end").textContent = timeText(t.execution_end_time) || "—";
  $("detail-duration").textContent =
    typeof t.execution_duration === "number" ? t.execution_duration.toFixed(2) + " s" : "—";
  // A task's result is a record ({task_id, status, result: {status, result: "answer", steps...}}):
  // the device's answer text first, the whole record folded below.
  const answer = answerText(t.result);
  $("detail-result").textContent = answer !== null ? answer : show(t.result);
  $("detail-raw").hidden = answer === null;
  $("detail-raw-text").textContent = answer !== null ? show(t.result) : "";
  $("detail-error").textContent = show(t.error);
}
