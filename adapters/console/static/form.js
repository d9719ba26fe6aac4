// A `form` question drawn from its JSON Schema (the flat subset bot/_form_schema.py
// checks), and its answer read back as the schema's object. Loaded before app.js,
// whose el() and say() it uses when a question is drawn. Only reshaping happens
// here (a number's text to a number, a local date-time to UTC): the bot decides
// whether the answer fits, and its sentence comes back in the banner. Titles, names
// and enums arrive shown; the answer is keyed by each property's `key` and carries
// the enum `values` served beside them, as the schema has them.
"use strict";

function formProperties(q) {
  const schema = (q.payload && q.payload.schema) || {};
  const props = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  return { props, required: new Set(Array.isArray(schema.required) ? schema.required : []) };
}

function formLabel(name, spec) {
  return typeof spec.title === "string" && spec.title ? spec.title : name;
}

function formHead(q) {
  const p = q.payload || {};
  return [el("h3", { text: p.title || say("form_title") }), p.message ? el("p", { text: p.message }) : null];
}

// One control per property, and a reader that gives its value (undefined: left empty).
function formControl(name, spec, required) {
  const id = `f-${Math.random().toString(36).slice(2)}`;
  const def = spec.default;
  const choices = spec.type === "array" ? ((spec.items || {}).enum || []) : spec.enum;
  const values = (spec.type === "array" ? (spec.items || {}).values : spec.values) || choices || [];
  if (spec.type === "boolean") {
    const select = el("select", { id, name, required: required || null },
      el("option", { value: "", text: "" }),
      el("option", { value: "true", text: say("yes"), selected: def === true || null }),
      el("option", { value: "false", text: say("no"), selected: def === false || null }));
    return [select, () => (select.value === "" ? undefined : select.value === "true")];
  }
  if (spec.type === "array") {
    const chosen = new Set(Array.isArray(def) ? def : []);
    const boxes = choices.map((text, i) => el("input", { type: "checkbox", value: values[i], checked: chosen.has(text) || null }));
    const group = el("div", { id, class: "options", role: "group" },
      ...boxes.map((box, i) => el("label", {}, box, String(choices[i]))));
    return [group, () => boxes.filter((box) => box.checked).map((box) => box.value)];
  }
  if (Array.isArray(choices)) {
    const select = el("select", { id, name, required: required || null },
      el("option", { value: "", text: say("choose") }),
      ...choices.map((text, i) => el("option", { value: values[i], text: String(text), selected: text === def || null })));
    return [select, () => (select.value === "" ? undefined : select.value)];
  }
  if (spec.type === "integer" || spec.type === "number") {
    const input = el("input", {
      id, name, type: "number", required: required || null,
      step: spec.type === "integer" ? "1" : "any", min: spec.minimum, max: spec.maximum,
    });
    if (typeof def === "number") input.value = String(def);
    // A text the bot cannot read as a number goes as text, so its sentence names the field.
    return [input, () => (input.value.trim() === "" ? undefined : Number.isNaN(Number(input.value)) ? input.value : Number(input.value))];
  }
  const kinds = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };
  const type = kinds[spec.format] || "text";
  const input = el("input", {
    id, name, type, required: required || null, minlength: spec.minLength, maxlength: spec.maxLength,
  });
  if (typeof def === "string") input.value = type === "datetime-local" ? localDateTime(def) : def;
  const read = () => {
    const value = type === "datetime-local" ? input.value : input.value.trim();
    if (value === "") return undefined;
    // datetime-local has no zone: the browser's own, sent as UTC.
    return type === "datetime-local" ? new Date(value).toISOString().replace(/\.\d{3}Z$/, "Z") : value;
  };
  return [input, read];
}

function localDateTime(text) {
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

function formForm(q, submit) {
  const { props, required } = formProperties(q);
  const readers = [];
  const rows = Object.entries(props).map(([name, spec]) => {
    const [control, read] = formControl(name, spec || {}, required.has(name));
    readers.push([spec && spec.key !== undefined ? spec.key : name, read]);
    const label = el("label", { for: control.id }, formLabel(name, spec || {}),
      required.has(name) ? el("span", { class: "required", text: ` (${say("required")})` }) : null);
    const hint = spec && spec.description ? el("span", { class: "description", text: spec.description }) : null;
    return el("div", { class: "field", "data-field": name }, label, control, hint);
  });
  // novalidate: the bot checks every field and says which one is wrong, the same on every surface.
  const form = el("form", { novalidate: true }, ...formHead(q), ...rows,
    el("div", { class: "actions" }, el("button", { type: "submit", text: say("submit") })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const answer = {};
    for (const [name, read] of readers) {
      const value = read();
      if (value !== undefined) answer[name] = value;
    }
    submit(answer);
  });
  return [form];
}

function formAnswers(q) {
  const { props } = formProperties(q);
  const answer = q.answer || {};
  const shown = (value) => (typeof value === "boolean" ? say(value ? "yes" : "no")
    : Array.isArray(value) ? (value.join(", ") || say("none_chosen")) : String(value));
  const rows = Object.entries(props).filter(([name]) => name in answer).map(([name, spec]) =>
    el("tr", {}, el("th", { scope: "row", text: formLabel(name, spec || {}) }), el("td", { text: shown(answer[name]) })));
  return rows.length ? el("table", { class: "arguments form-answer" }, el("tbody", {}, ...rows)) : null;
}

// Each problem the bot named (the 422's fields) beside its own field; the banner has the sentence.
function markFields(box, fields) {
  for (const field of box.querySelectorAll(".field[data-field]")) {
    const old = field.querySelector(".field-error");
    if (old) old.remove();
    const problem = fields[field.dataset.field];
    if (typeof problem === "string") field.append(el("span", { class: "field-error", role: "alert", text: problem }));
  }
}
