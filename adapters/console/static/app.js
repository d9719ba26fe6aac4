// The console page: draws conversations from the JSON API, answers questions
// with their tokens, and re-reads whatever /api/events says has changed.
// Every text goes in through textContent, never as HTML.
"use strict";

const ID_PATTERN = /^[a-z0-9-]{1,40}$/;
const NAME_KEY = "console.name";
const OFFLINE = "The console cannot reach the bot; check that it is running, then try again.";
const NOT_JSON = "That is not valid JSON; write the answer as a JSON object.";

const state = { cid: "", rendered: new Map() };
const $ = (id) => document.getElementById(id);

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
  return nodes.filter((node) => node !== null && node !== undefined);
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
    return { status: 0, data: { ok: false, error: OFFLINE } };
  }
}

function errorOf(result) {
  return result.data.error || `The bot answered with status ${result.status}; try again.`;
}

function showBanner(text) {
  const banner = $("banner");
  banner.textContent = text;
  banner.hidden = false;
}

function clearBanner() {
  const banner = $("banner");
  banner.textContent = "";
  banner.hidden = true;
}

function displayName() {
  return $("name").value.trim().slice(0, 40) || "operator";
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

// --- conversations -----------------------------------------------------------

function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  const random = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `c-${Date.now().toString(36)}-${random}`;
}

function open(cid) {
  if (cid === state.cid) return;
  state.cid = cid;
  state.rendered = new Map();
  $("feed").replaceChildren();
  if (location.hash.slice(1) !== cid) history.replaceState(null, "", `#${cid}`);
  clearBanner();
  refreshConversation();
  refreshList();
}

const refreshList = serial(async () => {
  const result = await call("GET", "/api/conversations");
  if (result.status !== 200) return;
  const items = result.data.conversations.map((item) =>
    el("li", {}, el("a", {
      href: `#${item.id}`,
      title: item.title,
      "aria-current": item.id === state.cid ? "true" : null,
      text: item.title || item.id,
    })),
  );
  $("conversations").replaceChildren(...items);
});

const refreshConversation = serial(async () => {
  const cid = state.cid;
  const result = await call("GET", `/api/conversations/${cid}`);
  if (cid !== state.cid) return;
  if (result.status !== 200) {
    showBanner(errorOf(result));
    return;
  }
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
      nodes.push(keep(q.interrupt_id, `${q.status}|${q.closed_text}`, () => question(q)));
    }
    const end = runEnd(run);
    if (end) nodes.push(keep(`${run.run_id}:end`, `${run.status}|${run.final_text}`, end));
  }
  if (!nodes.length) {
    nodes.push(el("p", { class: "empty", text: "Nothing here yet. Ask the bot something, e.g. deploy web." }));
  }
  state.rendered = fresh;
  const feed = $("feed");
  const atBottom = feed.scrollHeight - feed.scrollTop - feed.clientHeight < 40;
  nodes.forEach((node, i) => {
    if (feed.children[i] !== node) feed.insertBefore(node, feed.children[i] || null);
  });
  while (feed.children.length > nodes.length) feed.lastElementChild.remove();
  if (atBottom) feed.scrollTop = feed.scrollHeight;
}

function userMessage(run) {
  const at = new Date(run.created_at * 1000).toLocaleString();
  return el("div", { class: "user-message" }, run.text, el("span", { class: "meta", text: at }));
}

function runEnd(run) {
  if (run.status === "completed") {
    return () => el("div", { class: "bot-message", text: run.final_text });
  }
  if (run.status === "failed") {
    return () => el("div", { class: "bot-message failed", text: run.final_text });
  }
  const waiting = run.questions.some((q) => q.status === "outstanding");
  return waiting ? null : () => el("div", { class: "working", text: "Working…" });
}

function question(q) {
  const box = el("article", { class: "question", "data-status": q.status, "data-interrupt": q.interrupt_id });
  if (q.status === "outstanding" && q.token) {
    const draw = { ask_user: askUserForm, approval: approvalForm }[q.kind] || jsonForm;
    box.append(...present(draw(q, (answer) => submitAnswer(q, answer, box))));
  } else {
    box.append(...present(closedSummary(q)), el("p", { class: "closed-text", text: q.closed_text || q.status }));
  }
  return box;
}

function prompt(item) {
  return [item.header ? el("h3", { text: item.header }) : null, el("p", { text: item.question })];
}

function askUserForm(q, submit) {
  const items = (q.payload && q.payload.questions) || [];
  const only = items.length === 1 ? items[0] : null;
  if (only && only.options.length && !only.multi_select) {
    const buttons = only.options.map((option) => el("button", {
      type: "button",
      title: option.description || null,
      text: option.label,
      onclick: () => submit({ answers: { [only.question]: option.label } }),
    }));
    return [...prompt(only), el("div", { class: "options" }, ...buttons)];
  }
  const readers = [];
  const fieldsets = items.map((item) => {
    const set = el("fieldset", {}, el("legend", { text: item.header || "Question" }), el("p", { text: item.question }));
    if (!item.options.length) {
      const input = el("input", { type: "text", "aria-label": item.question });
      readers.push([item.question, () => input.value.trim()]);
      set.append(input);
    } else if (item.multi_select) {
      const boxes = item.options.map((option) => el("input", { type: "checkbox", value: option.label }));
      readers.push([item.question, () => boxes.filter((b) => b.checked).map((b) => b.value)]);
      set.append(el("div", { class: "options" }, ...boxes.map((b, i) =>
        el("label", { title: item.options[i].description || null }, b, item.options[i].label))));
    } else {
      let chosen = "";
      const buttons = item.options.map((option) => el("button", {
        type: "button",
        title: option.description || null,
        "aria-pressed": "false",
        text: option.label,
        onclick: (event) => {
          chosen = chosen === option.label ? "" : option.label;
          for (const b of buttons) b.setAttribute("aria-pressed", String(b === event.currentTarget && chosen !== ""));
        },
      }));
      readers.push([item.question, () => chosen]);
      set.append(el("div", { class: "options" }, ...buttons));
    }
    return set;
  });
  const form = el("form", {}, ...fieldsets, el("div", { class: "actions" }, el("button", { type: "submit", text: "Submit" })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit({ answers: Object.fromEntries(readers.map(([text, read]) => [text, read()])) });
  });
  return [form];
}

function approvalForm(q, submit) {
  const p = q.payload || {};
  const risk = ["low", "medium", "high"].includes(p.risk) ? p.risk : "medium";
  const comment = el("input", { type: "text", "aria-label": "Comment", placeholder: "Comment (optional)" });
  const decide = (decision) => () => submit({ decision, comment: comment.value.trim() });
  return [
    el("h3", {}, `Approve: ${p.action || q.name} `, el("span", { class: `risk risk-${risk}`, text: `${risk} risk` })),
    el("p", { text: p.summary || "" }),
    argumentsTable(p.arguments || {}),
    comment,
    el("div", { class: "actions" },
      el("button", { type: "button", class: "approve", text: "Approve", onclick: decide("approve") }),
      el("button", { type: "button", class: "reject", text: "Reject", onclick: decide("reject") })),
  ];
}

function argumentsTable(args) {
  const rows = Object.entries(args).map(([key, value]) =>
    el("tr", {}, el("th", { scope: "row", text: key }),
      el("td", { text: typeof value === "string" ? value : JSON.stringify(value) })));
  return rows.length ? el("table", { class: "arguments" }, el("tbody", {}, ...rows)) : null;
}

function jsonForm(q, submit) {
  const area = el("textarea", { "aria-label": "Answer (JSON)", rows: "4" });
  area.value = "{}";
  const form = el("form", {},
    el("h3", { text: `The bot asks (${q.name})` }),
    el("pre", { text: JSON.stringify(q.payload, null, 2) }),
    area,
    el("div", { class: "actions" }, el("button", { type: "submit", text: "Submit" })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let answer;
    try {
      answer = JSON.parse(area.value);
    } catch {
      showBanner(NOT_JSON);
      return;
    }
    submit(answer);
  });
  return [form];
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
    const decision = answer.decision ? `→ ${answer.decision}${answer.comment ? `: ${answer.comment}` : ""}` : "";
    return [el("h3", { text: `Approve: ${p.action || q.name}` }), el("p", { text: p.summary || "" }),
      decision ? el("p", { class: "answer-summary", text: decision }) : null];
  }
  return [el("h3", { text: `The bot asked (${q.name})` })];
}

async function submitAnswer(q, answer, box) {
  const controls = box.querySelectorAll("button, input, textarea");
  for (const control of controls) control.disabled = true;
  const result = await call("POST", "/api/answer", { token: q.token, answer, name: displayName() });
  for (const control of controls) control.disabled = false;
  if (result.data.ok) clearBanner();
  else showBanner(errorOf(result));
  refreshConversation();
}

// --- sending and wiring ------------------------------------------------------

async function send(event) {
  event.preventDefault();
  const box = $("message");
  const text = box.value.trim();
  if (!text) return;
  const result = await call("POST", `/api/conversations/${state.cid}/messages`, { text, name: displayName() });
  if (result.status !== 202) {
    showBanner(errorOf(result));
    return;
  }
  box.value = "";
  clearBanner();
  refreshConversation();
  refreshList();
}

function listen() {
  const events = new EventSource("/api/events");
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
  // After a reconnect, catch up on whatever changed while the stream was down.
  events.addEventListener("open", () => {
    refreshConversation();
    refreshList();
  });
}

function start() {
  const name = $("name");
  name.value = localStorage.getItem(NAME_KEY) || "operator";
  name.addEventListener("input", () => localStorage.setItem(NAME_KEY, name.value.trim().slice(0, 40)));
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
  window.addEventListener("hashchange", () => {
    const cid = location.hash.slice(1);
    if (ID_PATTERN.test(cid)) open(cid);
  });
  const fromHash = location.hash.slice(1);
  open(ID_PATTERN.test(fromHash) ? fromHash : newId());
  listen();
}

start();
