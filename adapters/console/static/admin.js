// The console's admin panel: open questions with cancel, extend and resend.
// Every action is one call to /api/admin/..., which runs the same admin
// command as Slack's /hitl and the shell. Text goes in through textContent.
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

function title(question) {
  const payload = question.payload || {};
  const first = Array.isArray(payload.questions) && payload.questions[0];
  return (first && first.question) || payload.question || payload.summary || question.name;
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
}

function row(item, at) {
  const q = item.question;
  const id = encodeURIComponent(q.interrupt_id);
  const tr = el("tr", undefined, { "data-id": q.interrupt_id });
  tr.append(
    el("td", title(q)),
    el("td", q.requester || "?"),
    el("td", item.may_answer.join(", ")),
    el("td", age(at - q.issued_at)),
    el("td", new Date(q.expires_at * 1000).toLocaleString()),
  );
  const actions = el("td");
  actions.append(
    button("Cancel", () => {
      const reason = window.prompt("Reason for cancelling (optional)", "");
      if (reason !== null) act(`/api/admin/questions/${id}/cancel`, { reason });
    }),
    button("Extend", () => {
      const duration = window.prompt("Extend by (e.g. 30m, 2h, 1d)", "1h");
      if (duration) act(`/api/admin/questions/${id}/extend`, { duration });
    }),
    button("Resend", () => act(`/api/admin/questions/${id}/resend`, {})),
  );
  tr.append(actions);
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

$("more").addEventListener("click", () => load(false));
load(true);
