// The console page: draws conversations from the JSON API, answers questions
// with their tokens, and re-reads whatever /api/events says has changed.
// Every text goes in through textContent, never as HTML, and arrives already shown
// (adapters/console/_shown.py: a bidi control reads as ⟨U+202E⟩); an answer sends
// back the originals served beside it (a question's `key`, an option's `value`).
// Every sentence comes from the wording block the server puts in the page
// (adapters/console/_wording.py).
"use strict";

const W = JSON.parse(document.getElementById("wording").textContent);
const ID_PATTERN = /^[a-z0-9-]{1,40}$/;
const RETRY_MS = 3000;
const PHONE = window.matchMedia("(max-width: 760px)");

const state = { cid: "", rendered: new Map(), you: "", list: [], live: false, firstList: true };
const $ = (id) => document.getElementById(id);

function say(key, values = {}) {
  return (W[key] || key).replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...present(children));
  return node;
}

// DOM append() renders null as the text "null"; parts may be optional.
function present(nodes) {
  return nodes.filter((node) => node !== null && node !== undefined && node !== "");
}

// --- time: one format everywhere, local time with a relative part ------------

const ABSOLUTE = new Intl.DateTimeFormat(undefined, {
  weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
});

function relative(seconds) {
  const span = Math.abs(seconds);
  if (span < 45) return say("now");
  const units = [[86400, "d"], [3600, "h"], [60, "min"]];
  const [size, unit] = units.find(([s]) => span >= s) || [60, "min"];
  const text = `${Math.round(span / size)} ${unit}`;
  return seconds > 0 ? say("in", { span: text }) : say("ago", { span: text });
}

// A <time> that says "in 23 h (Tue 1 Dec, 20:05)" and is refreshed every 30 s;
// a short one (the sidebar) says only "5 min ago" and keeps the date as a tooltip.
function timeNode(at, { short = false } = {}) {
  const node = el("time", {
    datetime: new Date(at * 1000).toISOString(),
    "data-at": at,
    "data-short": short || null,
    title: ABSOLUTE.format(new Date(at * 1000)),
  });
  node.textContent = timeText(at, short);
  return node;
}

function timeText(at, short) {
  const rel = relative(at - Date.now() / 1000);
  return short ? rel : `${rel} (${ABSOLUTE.format(new Date(at * 1000))})`;
}

function refreshTimes() {
  for (const node of document.querySelectorAll("time[data-at]")) {
    node.textContent = timeText(Number(node.dataset.at), node.hasAttribute("data-short"));
  }
}

// --- talking to the bot ------------------------------------------------------

async function call(method, path, body) {
  const init = { method, cache: "no-store", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    const response = await fetch(path, init);
    const data = await response.json().catch(() => ({}));
    return { status: response.status, data };
  } catch {
    return { status: 0, data: { ok: false, error: say("offline") } };
  }
}

function errorOf(result) {
  return result.data.error || say("status_error", { status: result.status });
}

// Server sentences (bot/messages.py) write times as "2026-11-30 20:05 UTC" for
// every surface; the page shows them in its own local, relative format.
// "at " goes too: "answered by Ana 5 min ago (Mon, Nov 30, 08:20 PM)" reads right.
const SERVER_TIME = /(?:at )?(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d) UTC/g;

function withLocalTimes(text) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(SERVER_TIME)) {
    const [whole, y, mo, d, h, mi] = match;
    parts.push(text.slice(last, match.index), timeNode(Date.UTC(y, mo - 1, d, h, mi) / 1000));
    last = match.index + whole.length;
  }
  parts.push(text.slice(last));
  return parts;
}

function showBanner(text) {
  $("banner-text").replaceChildren(...present(withLocalTimes(text)));
  $("banner-text").dataset.text = text;
  $("banner").hidden = false;
}

function clearBanner() {
  $("banner-text").textContent = "";
  $("banner-text").dataset.text = "";
  $("banner").hidden = true;
}

// Runs fn at most once at a time; calls made meanwhile fold into one more run.
function serial(fn) {
  let running = null;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  };
}

// --- the live connection -----------------------------------------------------

function setLive(live) {
  state.live = live;
  for (const id of ["connection", "connection-small"]) {
    $(id).textContent = live ? say("live") : say("down");
    $(id).dataset.state = live ? "live" : "down";
  }
  const offline = $("offline");
  offline.textContent = say("reconnecting");
  offline.hidden = live;
}

// EventSource retries by itself after a network error, but gives up for good
// on an HTTP error (a 429 cap, a 401 after a restart); then we retry on a timer.
function listen() {
  const events = new EventSource("/api/events");
  events.addEventListener("open", () => {
    const wasDown = !state.live;
    setLive(true);
    if (wasDown && $("banner-text").dataset.text === say("offline")) clearBanner();
    // Catch up on whatever changed while the stream was down.
    refreshConversation();
    refreshList();
  });
  events.addEventListener("changed", (event) => {
    let changed = "";
    try {
      changed = JSON.parse(event.data).conversation;
    } catch {
      return;
    }
    if (changed === state.cid) refreshConversation();
    refreshList();
  });
  events.addEventListener("error", () => {
    setLive(false);
    if (events.readyState === EventSource.CLOSED) setTimeout(listen, RETRY_MS);
  });
}

// --- conversations -----------------------------------------------------------

function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  const random = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `c-${Date.now().toString(36)}-${random}`;
}

function open(cid) {
  if (PHONE.matches) toggleSidebar(false);
  if (cid === state.cid) return;
  state.cid = cid;
  state.rendered = new Map();
  // Until the first read answers: a slow load must not look like an empty conversation.
  $("feed").replaceChildren(el("p", { class: "empty loading", text: say("loading") }));
  $("feed").setAttribute("aria-busy", "true");
  if (location.hash.slice(1) !== cid) history.replaceState(null, "", `#${cid}`);
  clearBanner();
  refreshConversation();
  drawList();
}

// Waiting on you first, then waiting on others, then the most recent.
function ordered(items) {
  const rank = (item) => (item.waiting_on_you ? 0 : item.waiting ? 1 : 2);
  return [...items].sort((a, b) => rank(a) - rank(b) || b.updated_at - a.updated_at);
}

// Same first words get "#2", "#3" by age, so "deploy web" x4 can be told apart.
function titles(items) {
  const byTitle = new Map();
  for (const item of [...items].sort((a, b) => a.updated_at - b.updated_at)) {
    const title = item.title || say("untitled");
    byTitle.set(title, [...(byTitle.get(title) || []), item.id]);
  }
  const shown = new Map();
  for (const [title, ids] of byTitle) {
    ids.forEach((id, i) => shown.set(id, ids.length > 1 ? `${title} #${i + 1}` : title));
  }
  return shown;
}

const refreshList = serial(async () => {
  const result = await call("GET", "/api/conversations");
  if (result.status !== 200) return;
  state.list = result.data.conversations;
  if (result.data.you !== state.you) {
    state.you = result.data.you;
    $("you").textContent = say(result.data.sign_in ? "signed_in_as" : "local_operator", { name: state.you });
  }
  if (state.firstList) {
    state.firstList = false;
    // The first load opens what waits on you, unless the address names a conversation.
    const mine = ordered(state.list).find((item) => item.waiting_on_you);
    if (!location.hash.slice(1) && mine) open(mine.id);
  }
  drawList();
});

function drawList() {
  setMenuLabel();
  if (state.firstList) return; // still loading: keep the sidebar's loading line
  const names = titles(state.list);
  const items = ordered(state.list).map((item) => {
    const badge = item.waiting
      ? el("span", {
          class: item.waiting_on_you ? "badge mine" : "badge",
          text: String(item.waiting),
          title: say(item.waiting_on_you ? "waiting_on_you" : "waiting", { n: item.waiting_on_you || item.waiting }),
        })
      : null;
    const meta = el("span", { class: "meta" }, say(item.runs === 1 ? "run" : "runs", { n: item.runs }), " · ", timeNode(item.updated_at, { short: true }));
    return el("li", {}, el("a", {
      href: `#${item.id}`,
      "data-waiting": item.waiting || null,
      "aria-current": item.id === state.cid ? "true" : null,
      // Picking the open conversation again fires no hashchange; close the panel anyway.
      onclick: () => toggleSidebar(false),
    }, el("span", { class: "row" }, el("span", { class: "title", text: names.get(item.id) }), badge), meta));
  });
  $("conversations").replaceChildren(...items);
  // The list may arrive after the feed was drawn empty: point at it now that it is there.
  const empty = $("feed").querySelector(".empty:not(.loading)");
  if (empty) empty.textContent = emptyText();
}

// An empty conversation beside a list of others says where they are.
function emptyText() {
  return say(state.list.some((item) => item.id !== state.cid) ? "empty_pick" : "empty");
}

// On a phone the menu button opens the list and, while it is open, closes it.
function setMenuLabel() {
  const waiting = state.list.filter((item) => item.waiting).length;
  const open = document.body.classList.contains("sidebar-open");
  $("menu").textContent = open
    ? say("menu_close")
    : waiting ? say("menu_waiting", { n: waiting }) : say("menu");
}

const refreshConversation = serial(async () => {
  const cid = state.cid;
  const result = await call("GET", `/api/conversations/${cid}`);
  if (cid !== state.cid) return;
  if (result.status !== 200) {
    showBanner(errorOf(result));
    for (const node of $("feed").querySelectorAll(".loading")) node.remove();
    $("feed").removeAttribute("aria-busy");
    return;
  }
  if ($("banner-text").dataset.text === say("offline")) clearBanner();
  render(result.data.runs);
});

// --- drawing the feed ------------------------------------------------------

// Nodes are kept by key while their content is unchanged, so a redraw never
// wipes what the person is typing into an open question.
function render(runs) {
  const fresh = new Map();
  const keep = (key, signature, build) => {
    const old = state.rendered.get(key);
    const entry = old && old.signature === signature ? old : { signature, node: build() };
    fresh.set(key, entry);
    return entry.node;
  };
  const nodes = [];
  for (const run of runs) {
    nodes.push(keep(`${run.run_id}:text`, run.text, () => userMessage(run)));
    for (const q of run.questions) {
      const signature = `${q.status}|${q.closed_by}|${q.yours}|${q.token ? 1 : 0}`;
      nodes.push(keep(q.interrupt_id, signature, () => question(q, run)));
    }
    const end = runEnd(run);
    if (end) nodes.push(keep(`${run.run_id}:end`, `${run.status}|${run.final_text}`, end));
  }
  if (!nodes.length) nodes.push(el("p", { class: "empty", text: emptyText() }));
  state.rendered = fresh;
  const feed = $("feed");
  feed.removeAttribute("aria-busy");
  const atBottom = feed.scrollHeight - feed.scrollTop - feed.clientHeight < 40;
  nodes.forEach((node, i) => {
    if (feed.children[i] !== node) feed.insertBefore(node, feed.children[i] || null);
  });
  while (feed.children.length > nodes.length) feed.lastElementChild.remove();
  if (atBottom) feed.scrollTop = feed.scrollHeight;
}

// What started the run: a person's message on the right, as in a chat; an agent's
// request (asked over the agents API) on the left, beside the bot's side of the feed.
function userMessage(run) {
  const from = run.status === "remote" ? "agent-message" : "user-message";
  return el("div", { class: from }, run.text,
    el("span", { class: "meta" }, `${run.asked_by} · `, timeNode(run.created_at)));
}

function runEnd(run) {
  if (run.status === "completed") {
    return () => el("div", { class: "bot-message", text: run.final_text });
  }
  if (run.status === "failed") {
    return () => el("div", { class: "bot-message failed", text: run.final_text });
  }
  const waiting = run.questions.some((q) => q.status === "outstanding");
  if (waiting) return null;
  // An agent outside the bridge asked (the agents API): no run of ours resumes, so
  // once its questions close the outcome above is the end, and the agent has it.
  if (run.status === "remote") {
    return () => el("div", { class: "bot-message agent-told", text: say("agent_told", { name: run.asked_by }) });
  }
  return () => el("div", { class: "working", text: say("working") });
}

function question(q, run) {
  const box = el("article", {
    class: "question", "data-status": q.status, "data-interrupt": q.interrupt_id, "data-yours": q.yours,
  });
  if (q.status === "outstanding" && q.token && q.yours) {
    const draw = { ask_user: askUserForm, approval: approvalForm, form: formForm }[q.kind] || jsonForm;
    box.append(...present(draw(q, (answer) => submitAnswer(q, answer, box))));
    box.append(facts(q, run));
  } else if (q.status === "outstanding") {
    box.append(...present(readOnly(q)), facts(q, run),
      el("p", { class: "not-yours", text: say("not_yours", { who: q.may_answer }) }));
  } else {
    box.append(...present(closedSummary(q)), closedLine(q));
  }
  return box;
}

// Who asked, who may answer, and when it expires: the same three facts on every question.
function facts(q, run) {
  return el("p", { class: "facts" },
    el("span", { text: say("asked_by", { name: run.asked_by }) }),
    el("span", { text: say("may_answer", { who: q.may_answer }) }),
    el("span", {}, say("expires", { when: "" }).trim(), " ", timeNode(q.expires_at)),
    q.tally ? el("span", { class: "tally", text: q.tally }) : null);
}

function closedLine(q) {
  const decision = q.kind === "approval" && q.answer ? q.answer.decision : "";
  const key = q.status === "answered"
    ? ({ approve: "approved_by", reject: "rejected_by", edit: "approved_changes_by",
      respond: "responded_by" }[decision] || "answered_by")
    : q.status === "cancelled" ? "cancelled_by" : "expired";
  const reason = q.status === "cancelled" && q.answer && typeof q.answer.reason === "string"
    ? q.answer.reason : "";
  return el("p", { class: "closed-text" }, say(key, { name: q.closed_by }), " · ",
    timeNode(q.closed_at || q.expires_at),
    reason ? el("span", { class: "cancel-reason", text: ` · ${say("cancel_reason", { reason })}` })
      : null);
}

function prompt(item) {
  return [item.header ? el("h3", { text: item.header }) : null, el("p", { text: item.question })];
}

// Options show their descriptions beside them, not only on hover.
function optionRow(option, control) {
  const id = `d-${Math.random().toString(36).slice(2)}`;
  if (option.description) control.setAttribute("aria-describedby", id);
  return el("div", { class: "option" }, control,
    option.description ? el("span", { class: "description", id, text: option.description }) : null);
}

function askUserForm(q, submit) {
  const items = (q.payload && q.payload.questions) || [];
  const only = items.length === 1 ? items[0] : null;
  if (only && only.options.length && !only.multi_select) {
    const rows = only.options.map((option) => optionRow(option, el("button", {
      type: "button",
      text: option.label,
      onclick: () => submit({ answers: { [only.key]: option.value } }),
    })));
    return [...prompt(only), el("div", { class: "options" }, ...rows)];
  }
  const readers = [];
  const fieldsets = items.map((item) => {
    const set = el("fieldset", {}, el("legend", { text: item.header || say("question") }), el("p", { text: item.question }));
    if (!item.options.length) {
      const input = el("input", { type: "text", "aria-label": item.question });
      readers.push([item.key, () => input.value.trim()]);
      set.append(input);
    } else if (item.multi_select) {
      const boxes = item.options.map((option) => el("input", { type: "checkbox", value: option.value }));
      readers.push([item.key, () => boxes.filter((b) => b.checked).map((b) => b.value)]);
      set.append(el("div", { class: "options" }, ...boxes.map((b, i) =>
        optionRow(item.options[i], el("label", {}, b, item.options[i].label)))));
    } else {
      let chosen = "";
      const buttons = item.options.map((option) => el("button", {
        type: "button",
        "aria-pressed": "false",
        text: option.label,
        onclick: (event) => {
          chosen = chosen === option.value ? "" : option.value;
          for (const b of buttons) b.setAttribute("aria-pressed", String(b === event.currentTarget && chosen !== ""));
        },
      }));
      readers.push([item.key, () => chosen]);
      set.append(el("div", { class: "options" }, ...buttons.map((b, i) => optionRow(item.options[i], b))));
    }
    return set;
  });
  const form = el("form", {}, ...fieldsets, el("div", { class: "actions" }, el("button", { type: "submit", text: say("submit") })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit({ answers: Object.fromEntries(readers.map(([text, read]) => [text, read()])) });
  });
  return [form];
}

function approvalHead(q) {
  const p = q.payload || {};
  const risk = ["low", "medium", "high"].includes(p.risk) ? p.risk : "medium";
  return [
    el("h3", {}, `${say("approve_title", { action: p.action || q.name })} `,
      el("span", { class: `risk risk-${risk}`, text: say("risk", { risk }) })),
    p.summary ? el("p", { text: p.summary }) : null,
    argumentsTable(p.arguments || {}),
  ];
}

function approvalForm(q, submit) {
  const p = q.payload || {};
  const allow = Array.isArray(p.allow) ? p.allow : ["approve", "reject"];
  const comment = el("input", { type: "text", "aria-label": say("comment"), placeholder: say("comment") });
  const decide = (decision) => () => submit({ decision, comment: comment.value.trim() });
  const edit = allow.includes("edit") ? editPanel(p, comment, submit) : null;
  const respond = allow.includes("respond") ? respondPanel(submit) : null;
  const toggle = (panel) => () => { panel.hidden = !panel.hidden; };
  return [
    ...approvalHead(q),
    comment,
    el("div", { class: "actions" },
      el("button", { type: "button", class: "approve", text: say("approve"), onclick: decide("approve") }),
      el("button", { type: "button", class: "reject", text: say("reject"), onclick: decide("reject") }),
      edit ? el("button", { type: "button", class: "edit", text: say("edit"), onclick: toggle(edit) }) : null,
      respond ? el("button", { type: "button", class: "respond", text: say("respond"), onclick: toggle(respond) }) : null),
    edit,
    respond,
  ];
}

// Approve with changes: one input per argument, prefilled. An input left as shown sends the
// argument's text as asked (``original``), so showing a value never changes it.
function editPanel(p, comment, submit) {
  const readers = (p.edit_fields || []).map((field) => {
    let input;
    if (Array.isArray(field.choices)) {
      input = el("select", { "aria-label": field.label },
        ...field.choices.map((c) => el("option", { value: c.value, text: c.text })));
      input.value = field.original;
    } else if (field.json) {
      input = el("textarea", { "aria-label": field.label, rows: "3" });
      input.value = field.text;
    } else {
      input = el("input", { type: "text", "aria-label": field.label });
      input.value = field.text;
    }
    const read = () => (input.value === field.text ? field.original : input.value);
    return [field.key, el("label", { class: "edit-field" }, el("span", { text: field.label }), input), read];
  });
  const kept = Array.isArray(p.edit_kept) && p.edit_kept.length
    ? el("p", { class: "edit-kept", text: say("edit_kept", { names: p.edit_kept.join(", ") }) })
    : null;
  const panel = el("form", { class: "edit-panel", hidden: true },
    ...readers.map(([, label]) => label),
    kept,
    el("div", { class: "actions" }, el("button", { type: "submit", class: "approve", text: say("approve_changes") })));
  panel.addEventListener("submit", (event) => {
    event.preventDefault();
    const args = Object.fromEntries(readers.map(([key, , read]) => [key, read()]));
    submit({ decision: "edit", arguments: args, comment: comment.value.trim() });
  });
  return panel;
}

function respondPanel(submit) {
  const message = el("textarea", { "aria-label": say("respond_label"), placeholder: say("respond_label"), rows: "3" });
  const panel = el("form", { class: "respond-panel", hidden: true }, message,
    el("div", { class: "actions" }, el("button", { type: "submit", text: say("respond_send") })));
  panel.addEventListener("submit", (event) => {
    event.preventDefault();
    submit({ decision: "respond", message: message.value.trim() });
  });
  return panel;
}

function argumentsTable(args) {
  const rows = Object.entries(args).map(([key, value]) =>
    el("tr", {}, el("th", { scope: "row", text: key }),
      el("td", { text: typeof value === "string" ? value : JSON.stringify(value) })));
  return rows.length ? el("table", { class: "arguments" }, el("tbody", {}, ...rows)) : null;
}

function jsonForm(q, submit) {
  const area = el("textarea", { "aria-label": say("answer_json"), rows: "4" });
  area.value = "{}";
  const form = el("form", {},
    el("h3", { text: say("bot_asks", { name: q.name }) }),
    el("pre", { text: JSON.stringify(q.payload, null, 2) }),
    area,
    el("div", { class: "actions" }, el("button", { type: "submit", text: say("submit") })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let answer;
    try {
      answer = JSON.parse(area.value);
    } catch {
      showBanner(say("not_json"));
      return;
    }
    submit(answer);
  });
  return [form];
}

function readOnly(q) {
  if (q.kind === "approval") return approvalHead(q);
  if (q.kind === "form") return formHead(q);
  if (q.kind === "ask_user") return ((q.payload || {}).questions || []).flatMap(prompt);
  return [el("h3", { text: say("bot_asks", { name: q.name }) })];
}

function closedSummary(q) {
  const p = q.payload || {};
  const answer = q.answer || {};
  if (q.kind === "ask_user") {
    return (p.questions || []).flatMap((item) => {
      const given = (answer.answers || {})[item.question];
      const shown = Array.isArray(given) ? given.join(", ") : given;
      return [...prompt(item), shown ? el("p", { class: "answer-summary", text: `→ ${shown}` }) : null];
    });
  }
  if (q.kind === "approval") {
    const decision = answer.decision === "approve" || answer.decision === "reject" ? answer.decision : "";
    const verdict = decision
      ? el("p", { class: `decision decision-${decision}` },
          el("strong", { text: say(decision === "approve" ? "approved" : "rejected") }),
          answer.comment ? `: ${answer.comment}` : "")
      : null;
    // Approved with changes, or answered instead: what changed, or what was said; the
    // closed line under it says who and when, once.
    const label = { edit: "changes", respond: "said_instead" }[answer.decision];
    const other = label
      ? el("p", { class: `decision decision-${answer.decision}` },
          el("strong", { text: say(label) }), `: ${q.decision_detail || ""}`)
      : null;
    return [...approvalHead(q), verdict, other];
  }
  if (q.kind === "form") return [...formHead(q), q.status === "answered" ? formAnswers(q) : null];
  return [el("h3", { text: say("bot_asked", { name: q.name }) })];
}

async function submitAnswer(q, answer, box) {
  const controls = box.querySelectorAll("button, input, textarea, select");
  for (const control of controls) control.disabled = true;
  const result = await call("POST", "/api/answer", { token: q.token, answer });
  for (const control of controls) control.disabled = false;
  if (result.data.ok) clearBanner();
  else showBanner(errorOf(result));
  markFields(box, result.data.fields || {});
  refreshConversation();
  refreshList();
}

// --- sending and wiring ------------------------------------------------------

async function send(event) {
  event.preventDefault();
  const box = $("message");
  const text = box.value.trim();
  if (!text) return;
  const result = await call("POST", `/api/conversations/${state.cid}/messages`, { text });
  if (result.status !== 202) {
    showBanner(errorOf(result));
    return;
  }
  box.value = "";
  clearBanner();
  refreshConversation();
  refreshList();
}

function toggleSidebar(show) {
  const open = show ?? !document.body.classList.contains("sidebar-open");
  document.body.classList.toggle("sidebar-open", open);
  $("menu").setAttribute("aria-expanded", String(open));
  setMenuLabel();
}

function label() {
  document.title = say("title");
  $("title").textContent = say("title");
  $("new-conversation").textContent = say("new_conversation");
  $("admin-link").textContent = say("admin_link");
  $("conversations-nav").setAttribute("aria-label", say("conversations"));
  $("menu").textContent = say("menu");
  $("conversations").replaceChildren(el("li", { class: "loading", text: say("loading") }));
  $("banner-close").textContent = "×";
  $("banner-close").setAttribute("aria-label", say("close"));
  $("message").setAttribute("aria-label", say("message_label"));
  $("message").placeholder = say("message_hint");
  $("send").textContent = say("send");
  // No connection state until the first attempt has succeeded or failed.
  $("offline").hidden = true;
}

function start() {
  label();
  $("composer").addEventListener("submit", send);
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("new-conversation").addEventListener("click", () => {
    open(newId());
    $("message").focus();
  });
  $("menu").addEventListener("click", () => toggleSidebar());
  $("banner-close").addEventListener("click", clearBanner);
  window.addEventListener("hashchange", () => {
    const cid = location.hash.slice(1);
    if (ID_PATTERN.test(cid)) open(cid);
  });
  const fromHash = location.hash.slice(1);
  open(ID_PATTERN.test(fromHash) ? fromHash : newId());
  history.replaceState(null, "", ID_PATTERN.test(fromHash) ? `#${fromHash}` : location.pathname);
  refreshList();
  listen();
  setInterval(refreshTimes, 30_000);
}

start();
