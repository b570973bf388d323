/* The device panel and the add-device form, with the reference's validation messages; the
 * server's own answers (404 no devices file, 409 duplicate, 422, 500) are shown as they come. */

import { $, el, show, timeText } from "./dom.js";

function deviceStatus(raw) {
  const s = String(raw || "unknown").toLowerCase().replace(/^devicestatus\./, "");
  if (["busy", "running"].includes(s)) return "busy";
  if (["connected", "online"].includes(s)) return "connected";
  if (["idle", "connecting", "disconnected", "failed", "offline"].includes(s)) return s;
  return "unknown";
}

export function renderDevices(devices) {
  const list = $("device-list");
  list.replaceChildren();
  const ids = Object.keys(devices).sort();
  $("device-count").textContent = String(ids.length);
  for (const id of ids) {
    const d = devices[id];
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
function validateDevice(form, devices) {
  const errors = {};
  if (!form.device_id) errors.device_id = "Device ID is required";
  else if (Object.prototype.hasOwnProperty.call(devices, form.device_id)) {
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

async function submitDevice(ev, page) {
  ev.preventDefault();
  clearDeviceErrors();
  const form = readDeviceForm();
  const errors = validateDevice(form, page.devices());
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
      method: "POST", headers: page.headers({ "Content-Type": "application/json" }), body: JSON.stringify(body),
    });
    const answer = await resp.json().catch(() => ({}));
    if (!resp.ok) {
      $("device-form-error").textContent = errorText(answer, resp.status);
      return;
    }
    page.added(form.device_id, answer.device || body);
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


// `page` gives the known devices (for "Device ID already exists"), the HTTP headers (the API key)
// and what to do with a device the server added.
export function wireDeviceForm(page) {
  $("add-device").addEventListener("click", openDeviceModal);
  $("dev-cancel").addEventListener("click", closeDeviceModal);
  $("device-form").addEventListener("submit", (ev) => submitDevice(ev, page));
  $("device-modal").addEventListener("click", (ev) => {
    if (ev.target === $("device-modal")) closeDeviceModal();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && !$("device-modal").hidden) closeDeviceModal();
  });
}
