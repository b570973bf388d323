/* Starweave Galaxy WebUI: a hand-written page (no build step, nothing fetched from the internet).
 * It keeps one WebSocket to /ws, rebuilds everything from each `state_snapshot` (so a reload shows
 * the current state) and applies every later event to the devices, chat, DAG and event log.
 * All server text goes through textContent, never innerHTML: task results are untrusted. */

import { $, el, show, timeText } from "./dom.js";
import { normalizeConstellation, renderDag, renderDetails, taskStatus } from "./dag.js";
import { renderDevices, wireDeviceForm } from "./devices.js";

const MAX_MESSAGES = 500;
const MAX_EVENTS = 200;
const KEY_STORAGE = "starweave.webui.key";
const state = {
  session: null,
  devices: {},
  constellation: null, // {id, name, state, tasks: {id: task}, deps: [{from, to, type}]}
  messages: [],
  events: [],
  running: false,
  selectedTask: null,
};

// ------------------------------------------------------------------ key (never in a URL query)
// The key may arrive in the fragment (#key=...), which browsers never send to servers; we move it
// to sessionStorage and strip it from the address bar so it is not bookmarked or shared.
function readKey() {
  const match = /(?:^|[#&])key=([^&]*)/.exec(location.hash || "");
  if (match) {
    let key = match[1];
    try {
      key = decodeURIComponent(key);
    } catch (err) {
      // A stray "%" in a pasted key: keep it as typed.
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(KEY_STORAGE) || "";
}
const apiKey = readKey();

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
    // Under load the server sends several messages in one frame, as a JSON array (in order).
    if (Array.isArray(data)) data.forEach(handleMessage);
    else handleMessage(data);
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
  drawConstellation();
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
  renderDevices(state.devices);
}

function updateDevice(event) {
  const info = Object.assign({}, state.devices[event.device_id] || { device_id: event.device_id },
    event.device_info || {});
  if (event.device_status) info.status = event.device_status;
  state.devices[event.device_id] = info;
  renderDevices(state.devices);
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
// A busy run sends many events at once; redraw the DAG at most every 50 ms, not once per event.
let dagTimer = null;
function scheduleDag() {
  if (dagTimer !== null) return;
  dagTimer = setTimeout(() => {
    dagTimer = null;
    drawConstellation();
  }, 50);
}

function selectTask(id) {
  state.selectedTask = id;
  drawConstellation();
}

function drawConstellation() {
  renderDag(state.constellation, state.selectedTask);
  const c = state.constellation;
  renderDetails(state.selectedTask && c ? c.tasks[state.selectedTask] : null);
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
  wireDeviceForm({
    devices: () => state.devices,
    headers: apiHeaders,
    added: (id, device) => {
      state.devices[id] = device;
      renderDevices(state.devices);
    },
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
    resizeTimer = setTimeout(drawConstellation, 150);
  });
  // Keep idle connections alive through proxies; the server answers with pong.
  setInterval(() => send({ type: "ping", timestamp: Date.now() / 1000 }), 25000);
}

wire();
connect();
// For devtools and the browser tests: the state, and a way to feed the page messages.
window.starweaveWebUI = { state: state, handleMessage: handleMessage };
