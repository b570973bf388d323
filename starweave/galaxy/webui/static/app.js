/* Starweave Galaxy WebUI: a hand-written page (no build step, nothing fetched from the internet).
 * It keeps one WebSocket to /ws, rebuilds everything from each `state_snapshot` (so a reload shows
 * the current state) and applies every later event to the devices, chat, DAG and event log.
 * All server text goes through textContent, never innerHTML: task results are untrusted. */
"use strict";

(function () {
  const MAX_MESSAGES = 500;
  const MAX_EVENTS = 200;
  const KEY_STORAGE = "starweave.webui.key";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const NODE_W = 170, NODE_H = 46, COL_GAP = 70, ROW_GAP = 22, PAD = 16;

  const state = {
    session: null,
    devices: {},
    constellation: null, // {id, name, state, tasks: {id: task}, deps: [{from, to, type}]}
    messages: [],
    events: [],
    running: false,
    selectedTask: null,
  };

  const $ = (id) => document.getElementById(id);

  // ------------------------------------------------------------------ key (never in a URL query)
  // The key may arrive in the fragment (#key=...), which browsers never send to servers; we move it
  // to sessionStorage and strip it from the address bar so it is not bookmarked or shared.
  function readKey() {
    const match = /(?:^|[#&])key=([^&]*)/.exec(location.hash || "");
    if (match) {
      sessionStorage.setItem(KEY_STORAGE, decodeURIComponent(match[1]));
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(KEY_STORAGE) || "";
  }
  const apiKey = readKey();

  // ------------------------------------------------------------------ helpers
  function el(tag, attrs, ...children) {
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

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    return node;
  }

  function toDate(value) {
    if (value === undefined || value === null || value === "") return null;
    if (typeof value === "number") return new Date(value > 1e12 ? value : value * 1000);
    const date = new Date(value);
    return isNaN(date.getTime()) ? null : date;
  }

  function timeText(value) {
    const date = toDate(value);
    return date ? date.toLocaleTimeString() : "";
  }

  function show(value) {
    if (value === undefined || value === null || value === "") return "—";
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value, null, 2);
    } catch (err) {
      return String(value);
    }
  }

  // The reference's status normaliser, keeping waiting/cancelled/skipped apart for the colours.
  function taskStatus(raw) {
    const s = String(raw || "pending").toLowerCase().replace(/^taskstatus\./, "");
    if (["completed", "complete", "success", "succeeded", "done"].includes(s)) return "completed";
    if (["running", "in_progress", "active", "started"].includes(s)) return "running";
    if (["failed", "error"].includes(s)) return "failed";
    if (["cancelled", "canceled"].includes(s)) return "cancelled";
    if (s === "skipped") return "skipped";
    if (["waiting_dependency", "waiting"].includes(s)) return "waiting_dependency";
    return "pending";
  }

  function deviceStatus(raw) {
    const s = String(raw || "unknown").toLowerCase().replace(/^devicestatus\./, "");
    if (["busy", "running"].includes(s)) return "busy";
    if (["connected", "online"].includes(s)) return "connected";
    if (["idle", "connecting", "disconnected", "failed", "offline"].includes(s)) return s;
    return "unknown";
  }

  // ------------------------------------------------------------------ HTTP
  function apiHeaders(extra) {
    const headers = Object.assign({ Accept: "application/json" }, extra || {});
    if (apiKey) headers["X-API-Key"] = apiKey;
    return headers;
  }

  // ------------------------------------------------------------------ WebSocket with backoff
  let socket = null;
  let attempts = 0;
  let reconnectTimer = null;
  let refusal = ""; // why the server last refused us, shown until a connection succeeds

  function setConnection(status) {
    $("conn-state").dataset.state = status;
    $("conn-label").textContent = status + (refusal && status !== "connected" ? ": " + refusal : "");
  }

  function connect() {
    clearTimeout(reconnectTimer);
    setConnection(attempts ? "reconnecting" : "connecting");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    let ws;
    try {
      ws = new WebSocket(scheme + "//" + location.host + "/ws");
    } catch (err) {
      scheduleReconnect();
      return;
    }
    socket = ws;
    ws.onopen = () => {
      // Always prove the key first: a server without one ignores this, a server with one refuses a
      // wrong or missing key at once (instead of after its auth timeout).
      ws.send(JSON.stringify({ type: "auth", key: apiKey }));
    };
    ws.onmessage = (msg) => {
      // Connected once the server talks to us (it stays silent until the key is accepted).
      if ($("conn-state").dataset.state !== "connected") {
        attempts = 0;
        refusal = "";
        setConnection("connected");
      }
      let data;
      try {
        data = JSON.parse(msg.data);
      } catch (err) {
        return; // not JSON: nothing this page can show
      }
      handleMessage(data);
    };
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      socket = null;
      // 1008: the server refused us (a missing or wrong key, or a foreign Origin); say why.
      refusal = ev.code === 1008
        ? (ev.reason || "refused by the server") + (apiKey ? "" : " (open the page with #key=YOUR_KEY)")
        : "";
      setConnection("disconnected");
      scheduleReconnect();
    };
  }

  // 1 s, 2 s, 4 s ... capped at 30 s; the page keeps trying (a restarted server is picked up).
  function scheduleReconnect() {
    attempts += 1;
    const delay = Math.min(30000, 1000 * 2 ** (attempts - 1));
    reconnectTimer = setTimeout(connect, delay);
  }

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  // ------------------------------------------------------------------ messages from the server
  function handleMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    switch (msg.type) {
      case "welcome":
        setSession(msg.session);
        return;
      case "state_snapshot":
        applySnapshot(msg);
        return;
      case "chat":
        addMessage(msg);
        if (msg.final) setRunning(false);
        return;
      case "error":
        addMessage({ role: "error", text: msg.message || "error", timestamp: msg.timestamp });
        return;
      case "dropped":
        // We missed events: ask for the whole state again rather than show a wrong picture.
        send({ type: "snapshot" });
        return;
      case "pong":
      case "auth_ok":
        return;
      default:
        break;
    }
    if (msg.event_type) handleEvent(msg);
  }

  function setSession(session) {
    if (!session) return;
    state.session = session;
    $("session-name").textContent = session.display_name || session.id || "Galaxy Session";
    $("session-name").title = session.id || "";
  }

  function applySnapshot(snap) {
    if (snap.session) setSession(snap.session);
    state.constellation = snap.constellation ? normalizeConstellation(snap.constellation) : null;
    state.messages = (snap.messages || []).slice(-MAX_MESSAGES);
    state.events = (snap.events || []).slice(-MAX_EVENTS);
    if (snap.all_devices) setDevices(snap.all_devices);
    setRunning(Boolean(snap.running));
    if (state.selectedTask && !(state.constellation && state.constellation.tasks[state.selectedTask])) {
      state.selectedTask = null;
    }
    renderChat();
    renderEvents();
    renderDag();
    renderDetails();
  }

  // The log keeps events without the DAG copies they carry (200 of those would be megabytes).
  const GRAPH_KEYS = ["constellation", "new_constellation", "old_constellation", "updated_constellation"];
  function slim(event) {
    const data = event.data;
    if (!data || !GRAPH_KEYS.some((key) => data[key] && typeof data[key] === "object")) return event;
    const kept = {};
    for (const [key, value] of Object.entries(data)) if (!GRAPH_KEYS.includes(key)) kept[key] = value;
    return Object.assign({}, event, { data: kept });
  }

  function handleEvent(event) {
    state.events.push(slim(event));
    if (state.events.length > MAX_EVENTS) state.events.splice(0, state.events.length - MAX_EVENTS);
    appendEventRow(event);
    if (event.all_devices && typeof event.all_devices === "object") setDevices(event.all_devices);
    else if (event.device_id) updateDevice(event);
    const data = event.data || {};
    const graph = data.new_constellation || data.constellation || data.updated_constellation;
    if (graph && typeof graph === "object" && graph.tasks) {
      state.constellation = normalizeConstellation(graph);
    }
    if (event.task_id && event.status && state.constellation) {
      const task = state.constellation.tasks[event.task_id];
      if (task) {
        task.status = taskStatus(event.status);
        if (event.result !== undefined && event.result !== null) task.result = event.result;
        if (event.error) task.error = event.error;
        // The constellation inside an event may predate the task's own timestamps: the event's time
        // is when it started or ended.
        if (task.status === "running" && !task.execution_start_time) task.execution_start_time = event.timestamp;
        if (["completed", "failed"].includes(task.status) && !task.execution_end_time) {
          task.execution_end_time = event.timestamp;
        }
      }
    }
    if (event.constellation_state && state.constellation &&
        (!event.constellation_id || event.constellation_id === state.constellation.id)) {
      state.constellation.state = event.constellation_state;
    }
    if (graph || event.task_id || event.constellation_state) scheduleDag();
  }

  // ------------------------------------------------------------------ devices
  function setDevices(all) {
    state.devices = {};
    for (const [id, info] of Object.entries(all || {})) state.devices[id] = Object.assign({ device_id: id }, info);
    renderDevices();
  }

  function updateDevice(event) {
    const info = Object.assign({}, state.devices[event.device_id] || { device_id: event.device_id },
      event.device_info || {});
    if (event.device_status) info.status = event.device_status;
    state.devices[event.device_id] = info;
    renderDevices();
  }

  function renderDevices() {
    const list = $("device-list");
    list.replaceChildren();
    const ids = Object.keys(state.devices).sort();
    $("device-count").textContent = String(ids.length);
    for (const id of ids) {
      const d = state.devices[id];
      const status = deviceStatus(d.status);
      const caps = Array.isArray(d.capabilities) ? d.capabilities.join(", ") : show(d.capabilities);
      list.append(el("li", { className: "device", "data-device-id": id, "data-status": status },
        el("div", { className: "device-head" },
          el("span", { className: "status-dot" }),
          el("strong", { text: id }),
          el("span", { className: "badge", text: status })),
        el("dl", {},
          el("dt", { text: "OS" }), el("dd", { className: "device-os", text: show(d.os) }),
          el("dt", { text: "Capabilities" }), el("dd", { className: "device-caps", text: caps || "—" }),
          el("dt", { text: "Task" }), el("dd", { className: "device-task", text: show(d.current_task_id) }),
          el("dt", { text: "Heartbeat" }),
          el("dd", { className: "device-heartbeat", text: timeText(d.last_heartbeat) || "—" }))));
    }
  }

  // ------------------------------------------------------------------ chat
  function addMessage(msg) {
    state.messages.push(msg);
    if (state.messages.length > MAX_MESSAGES) {
      state.messages.splice(0, state.messages.length - MAX_MESSAGES);
      renderChat();
      return;
    }
    appendMessageRow(msg);
  }

  function messageKind(msg) {
    if (msg.kind) return msg.kind;
    if (msg.final) return "final";
    if (msg.role === "error") return "error";
    // The service sends the agent's thoughts as non-final agent messages (AGENT_RESPONSE events
    // carry the same text, so the page takes them from the chat only, never twice).
    return msg.role === "user" ? "request" : "thought";
  }

  function appendMessageRow(msg) {
    const log = $("chat-log");
    $("chat-welcome").hidden = true;
    const kind = messageKind(msg);
    const row = el("div", { className: "msg msg-" + (msg.role || "agent") + " kind-" + kind,
      "data-role": msg.role || "agent", "data-kind": kind, "data-status": msg.status || null },
    el("div", { className: "msg-meta",
      text: (msg.role === "user" ? "You" : msg.role === "error" ? "Error" : kind === "thought" ? "Thought" : "Galaxy") +
        (msg.status ? " · " + msg.status : "") + " · " + timeText(msg.timestamp || Date.now() / 1000) }),
    el("div", { className: "msg-text", text: show(msg.text) }));
    log.append(row);
    log.scrollTop = log.scrollHeight;
  }

  function renderChat() {
    const log = $("chat-log");
    for (const row of Array.from(log.querySelectorAll(".msg"))) row.remove();
    $("chat-welcome").hidden = state.messages.length > 0;
    for (const msg of state.messages) appendMessageRow(msg);
  }

  function setRunning(running) {
    state.running = running;
    $("run-state").dataset.running = String(running);
    $("run-state").textContent = running ? "running" : "idle";
  }

  function submitChat(ev) {
    ev.preventDefault();
    const input = $("chat-input");
    const text = input.value.trim();
    if (!text) return;
    if (!send({ type: "request", text: text, timestamp: Date.now() / 1000 })) {
      addMessage({ role: "error", text: "Not connected; the request was not sent.", timestamp: Date.now() / 1000 });
      return;
    }
    input.value = "";
    setRunning(true);
  }

  // ------------------------------------------------------------------ event log
  function eventSummary(e) {
    const parts = [];
    if (e.task_id) parts.push(e.task_id);
    if (e.status) parts.push(String(e.status));
    if (e.device_id) parts.push(e.device_id);
    if (e.device_status) parts.push(String(e.device_status));
    if (e.constellation_state) parts.push(String(e.constellation_state));
    if (e.agent_name) parts.push(e.agent_name);
    return parts.join(" · ");
  }

  function eventRow(e) {
    return el("li", { className: "event", "data-event-type": String(e.event_type) },
      el("time", { text: timeText(e.timestamp) }),
      el("span", { className: "event-type", text: String(e.event_type) }),
      el("span", { className: "event-summary", text: eventSummary(e) }));
  }

  function appendEventRow(e) {
    const log = $("event-log");
    log.prepend(eventRow(e));
    while (log.children.length > MAX_EVENTS) log.lastElementChild.remove();
    $("event-count").textContent = String(state.events.length);
  }

  function renderEvents() {
    const log = $("event-log");
    log.replaceChildren(...state.events.slice().reverse().map(eventRow));
    $("event-count").textContent = String(state.events.length);
  }

  // ------------------------------------------------------------------ constellation and DAG
  function listOf(value, idKey) {
    if (!value) return [];
    if (Array.isArray(value)) return value;
    return Object.entries(value).map(([id, item]) => Object.assign({ [idKey]: id }, item));
  }

  function normalizeConstellation(c) {
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

  // A busy run sends many events at once; redraw the DAG at most every 50 ms, not once per event.
  let dagTimer = null;
  function scheduleDag() {
    if (dagTimer !== null) return;
    dagTimer = setTimeout(() => {
      dagTimer = null;
      renderDag();
      renderDetails();
    }, 50);
  }

  function renderDag() {
    const c = state.constellation;
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
      const g = svg("g", { class: "node status-" + t.status + (state.selectedTask === id ? " selected" : ""),
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

  function selectTask(id) {
    state.selectedTask = id;
    renderDag();
    renderDetails();
  }

  function answerText(result) {
    let value = result;
    for (let depth = 0; depth < 4 && value && typeof value === "object"; depth++) value = value.result;
    return typeof value === "string" && value !== "" && value !== result ? value : null;
  }

  function renderDetails() {
    const panel = $("task-details");
    const t = state.selectedTask && state.constellation && state.constellation.tasks[state.selectedTask];
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

  // ------------------------------------------------------------------ add device
  const FIELD_NAMES = ["device_id", "server_url", "os", "capabilities", "metadata"];

  function openDeviceModal() {
    $("device-form").reset();
    clearDeviceErrors();
    $("device-modal").hidden = false;
    $("dev-id").focus();
  }

  function closeDeviceModal() {
    $("device-modal").hidden = true;
  }

  function clearDeviceErrors() {
    for (const name of FIELD_NAMES) document.querySelector(`[data-error-for="${name}"]`).textContent = "";
    $("device-form-error").textContent = "";
  }

  // The reference's AddDeviceModal checks, with its messages.
  function validateDevice(form) {
    const errors = {};
    if (!form.device_id) errors.device_id = "Device ID is required";
    else if (Object.prototype.hasOwnProperty.call(state.devices, form.device_id)) {
      errors.device_id = "Device ID already exists";
    }
    if (!form.server_url) errors.server_url = "Server URL is required";
    else if (!/^wss?:\/\/[^\s/]+/i.test(form.server_url)) errors.server_url = "Invalid WebSocket URL";
    if (!form.os) errors.os = "OS is required";
    if (!form.capabilities.length) errors.capabilities = "At least one capability required";
    if (form.metadataError) errors.metadata = form.metadataError;
    return errors;
  }

  function readDeviceForm() {
    const metaText = $("dev-meta").value.trim();
    let metadata = {}, metadataError = "";
    if (metaText) {
      try {
        metadata = JSON.parse(metaText);
        if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) throw new Error("not an object");
      } catch (err) {
        metadataError = "Metadata must be a JSON object";
      }
    }
    return {
      device_id: $("dev-id").value.trim(),
      server_url: $("dev-url").value.trim(),
      os: $("dev-os").value.trim(),
      capabilities: $("dev-caps").value.split(",").map((s) => s.trim()).filter(Boolean),
      metadata: metadata,
      metadataError: metadataError,
      auto_connect: $("dev-auto").checked,
    };
  }

  async function submitDevice(ev) {
    ev.preventDefault();
    clearDeviceErrors();
    const form = readDeviceForm();
    const errors = validateDevice(form);
    for (const [name, message] of Object.entries(errors)) {
      document.querySelector(`[data-error-for="${name}"]`).textContent = message;
    }
    if (Object.keys(errors).length) return;
    const body = {
      device_id: form.device_id, server_url: form.server_url, os: form.os, capabilities: form.capabilities,
      metadata: form.metadata, auto_connect: form.auto_connect, max_retries: 5,
    };
    $("dev-submit").disabled = true;
    try {
      const resp = await fetch("/api/devices", {
        method: "POST", headers: apiHeaders({ "Content-Type": "application/json" }), body: JSON.stringify(body),
      });
      const answer = await resp.json().catch(() => ({}));
      if (!resp.ok) {
        $("device-form-error").textContent = errorText(answer, resp.status);
        return;
      }
      if (answer.device) state.devices[form.device_id] = answer.device;
      renderDevices();
      closeDeviceModal();
    } catch (err) {
      $("device-form-error").textContent = "Could not reach the server: " + err.message;
    } finally {
      $("dev-submit").disabled = false;
    }
  }

  // FastAPI answers {"detail": "..."} or, for schema errors, {"detail": [{"msg": ...}]}.
  function errorText(answer, status) {
    const detail = answer && answer.detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) return detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
    return "Request failed (HTTP " + status + ")";
  }

  // ------------------------------------------------------------------ wiring
  function wire() {
    $("chat-form").addEventListener("submit", submitChat);
    $("chat-input").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) submitChat(ev);
    });
    $("reset").addEventListener("click", () => {
      if (send({ type: "reset", timestamp: Date.now() / 1000 })) state.selectedTask = null;
    });
    $("add-device").addEventListener("click", openDeviceModal);
    $("dev-cancel").addEventListener("click", closeDeviceModal);
    $("device-form").addEventListener("submit", submitDevice);
    $("device-modal").addEventListener("click", (ev) => {
      if (ev.target === $("device-modal")) closeDeviceModal();
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && !$("device-modal").hidden) closeDeviceModal();
    });
    $("detail-close").addEventListener("click", () => selectTask(null));
    $("dag-nodes").addEventListener("click", (ev) => {
      const node = ev.target.closest("[data-task-id]");
      if (node) selectTask(node.dataset.taskId);
    });
    $("dag-nodes").addEventListener("keydown", (ev) => {
      const node = ev.target.closest("[data-task-id]");
      if (node && (ev.key === "Enter" || ev.key === " ")) selectTask(node.dataset.taskId);
    });
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(renderDag, 150);
    });
    // Keep idle connections alive through proxies; the server answers with pong.
    setInterval(() => send({ type: "ping", timestamp: Date.now() / 1000 }), 25000);
  }

  wire();
  connect();
  // For devtools and the browser tests: the state, and a way to feed the page messages.
  window.starweaveWebUI = { state: state, handleMessage: handleMessage };
})();
