// The console's admin panel: open questions with cancel, extend and resend, and the
// history of closed ones. Every action is one call to /api/admin/..., which runs the
// same admin command as Slack's /hitl and the shell. Text goes in through textContent.
"use strict";

const $ = (id) => document.getElementById(id);
let after = null;

function el(tag, text, props = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [key, value] of Object.entries(props)) node.setAttribute(key, value);
  return node;
}

async function call(method, path, body) {
  const init = { method, cache: "no-store", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    const response = await fetch(path, init);
    return await response.json();
  } catch {
    return { ok: false, message: "The console cannot reach the bot; check that it is running." };
  }
}

function banner(text) {
  const node = $("banner");
  node.textContent = text;
  node.hidden = !text;
}

function age(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

// Expiry as the console writes it: "in 24 h (Wed, Dec 2, 03:48 PM)", local time.
const ABSOLUTE = new Intl.DateTimeFormat(undefined, {
  weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
});

function relative(seconds) {
  const span = Math.abs(seconds);
  if (span < 45) return "just now";
  const units = [[86400, "d"], [3600, "h"], [60, "min"]];
  const [size, unit] = units.find(([s]) => span >= s) || [60, "min"];
  const text = `${Math.round(span / size)} ${unit}`;
  return seconds > 0 ? `in ${text}` : `${text} ago`;
}

function expiry(at) {
  const node = el("time", `${relative(at - Date.now() / 1000)} (${ABSOLUTE.format(new Date(at * 1000))})`,
    { datetime: new Date(at * 1000).toISOString() });
  return node;
}

function title(question) {
  const payload = question.payload || {};
  const first = Array.isArray(payload.questions) && payload.questions[0];
  return (first && first.question) || payload.question || payload.summary || payload.title || question.name;
}

function button(label, action) {
  const node = el("button", label, { type: "button" });
  node.addEventListener("click", action);
  return node;
}

async function act(path, body) {
  const result = await call("POST", path, body);
  banner(result.message || "");
  await load(true);
  await loadHistory(true);
}

const DURATIONS = ["30m", "1h", "2h", "4h", "1d"];

function cell(label, content) {
  const td = el("td", undefined, { "data-label": label });
  td.append(content);
  return td;
}

// Cancel asks for an optional reason inline (no native prompt), then confirms.
function cancelForm(id, actions) {
  const form = el("form", undefined, { class: "cancel-form" });
  const reason = el("input", undefined, {
    type: "text", name: "reason", placeholder: "Reason (optional)", "aria-label": "Reason for cancelling",
    maxlength: "300",
  });
  const confirm = el("button", "Cancel question", { type: "submit", class: "danger" });
  const keep = button("Keep it", () => { form.remove(); actions.hidden = false; });
  form.append(reason, confirm, keep);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(`/api/admin/questions/${id}/cancel`, { reason: reason.value.trim() });
  });
  return form;
}

function row(item, at) {
  const q = item.question;
  const id = encodeURIComponent(q.interrupt_id);
  const tr = el("tr", undefined, { "data-id": q.interrupt_id });
  tr.append(
    cell("Question", title(q)),
    cell("Asked by", q.requester || "?"),
    cell("May answer", item.may_answer.join(", ")),
    cell("Age", age(at - q.issued_at)),
    cell("Expires", expiry(q.expires_at)),
  );
  const td = el("td", undefined, { "data-label": "Actions" });
  const actions = el("div", undefined, { class: "actions" });
  const by = el("select", undefined, { "aria-label": "Extend by" });
  for (const d of DURATIONS) by.append(el("option", d, d === "1h" ? { selected: "" } : {}));
  actions.append(
    button("Cancel", () => {
      actions.hidden = true;
      const form = cancelForm(id, actions);
      td.append(form);
      form.querySelector("input").focus();
    }),
    el("span", undefined, { class: "extend" }),
    button("Resend", () => act(`/api/admin/questions/${id}/resend`, {})),
  );
  actions.children[1].append(
    by, button("Extend", () => act(`/api/admin/questions/${id}/extend`, { duration: by.value })),
  );
  td.append(actions);
  tr.append(td);
  return tr;
}

async function load(fresh) {
  if (fresh) after = null;
  const query = after ? `?after=${encodeURIComponent(after)}` : "";
  const page = await call("GET", `/api/admin/pending${query}`);
  if (!page.ok) return banner(page.message);
  const body = $("pending").tBodies[0];
  if (fresh) body.replaceChildren();
  for (const item of page.items) body.append(row(item, page.at));
  const empty = fresh && page.items.length === 0;
  $("empty").hidden = !empty;
  $("pending").hidden = empty;
  after = page.next_after;
  $("more").hidden = !after;
  const stats = await call("GET", "/api/admin/stats");
  if (stats.ok) {
    const s = stats.stats;
    $("stats").textContent =
      `${s.outstanding} open · ${s.answered} answered · ${s.expired} expired · ` +
      `${s.cancelled} cancelled · ${s.deliveries_failed} deliveries failed`;
  }
}

// History: the form's field names are `admin history`'s options, sent as they are; the
// bridge parses and checks them (a bad day or status comes back as its sentence).
let historyAfter = null;

function historyBanner(text) {
  const node = $("history-banner");
  node.textContent = text;
  node.hidden = !text;
}

function historyQuery() {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData($("history-filters"))) {
    const text = String(value).trim();
    if (text) params.set(name, text);
  }
  if (historyAfter) params.set("after", historyAfter);
  return params.toString();
}

// History reaches back past this year: its times say which, in local time.
const CLOSED = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
});

function closedAt(at) {
  return el("time", `${CLOSED.format(new Date(at * 1000))} (${relative(at - Date.now() / 1000)})`,
    { datetime: new Date(at * 1000).toISOString() });
}

function decidedBy(q) {
  const name = q.closed_by || "";
  const id = q.closed_by_id || "";
  if (name && id && name !== id) return `${name} (${id})`;
  return name || id || "nobody";
}

function historyRow(item) {
  const q = item.question;
  const tr = el("tr", undefined, { "data-id": q.interrupt_id, "data-status": q.status });
  tr.append(
    cell("Question", item.purged ? "(purged)" : item.title),
    cell("Outcome", item.decision ? `${q.status}: ${item.decision}` : q.status),
    cell("Decided by", decidedBy(q)),
    cell("Closed", q.closed_at ? closedAt(q.closed_at) : "?"),
    cell("Asked by", item.requester || "?"),
    cell("Where", `${q.scope} on ${item.surface || "?"}`),
  );
  return tr;
}

async function loadHistory(fresh) {
  if (fresh) historyAfter = null;
  const page = await call("GET", `/api/admin/history?${historyQuery()}`);
  const body = $("history").tBodies[0];
  if (!page.ok) {
    historyBanner(page.message);
    if (fresh) {
      body.replaceChildren();
      $("history").hidden = true;
      $("history-more").hidden = true;
    }
    return;
  }
  historyBanner("");
  if (fresh) body.replaceChildren();
  for (const item of page.items) body.append(historyRow(item));
  const empty = fresh && page.items.length === 0;
  $("history-empty").hidden = !empty;
  $("history").hidden = empty;
  historyAfter = page.next_after;
  $("history-more").hidden = !historyAfter;
}

$("more").addEventListener("click", () => load(false));
$("history-more").addEventListener("click", () => loadHistory(false));
$("history-filters").addEventListener("submit", (event) => {
  event.preventDefault();
  loadHistory(true);
});
$("history-clear").addEventListener("click", () => {
  $("history-filters").reset();
  loadHistory(true);
});
load(true);
loadHistory(true);
