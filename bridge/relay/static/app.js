// The arbiters' page of the chessbridge relay: the room at a glance, one table in detail.
// Live through server-sent events (/events); actions go to the relay, which sends them to the
// table with its own MQTT credentials. Text is always set with textContent (never as HTML).
"use strict";

const tables = new Map();      // table id -> summary
let me = { enabled: false, name: null, csrf: null };
let selected = null;           // table id shown in detail

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(text, ok = false) {
  const box = $("message");
  box.textContent = text;
  box.className = ok ? "ok" : "";
  box.hidden = !text;
}

function time(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleTimeString() : "";
}

// -- the room ---------------------------------------------------------------------------------

function clocks(summary) {
  const box = el("div", { class: "clocks" });
  if (!summary.clocks) {
    box.append(el("span", { class: "muted" }, summary.turn ? `${summary.turn} to move` : "no clock"));
    return box;
  }
  for (const color of ["white", "black"]) {
    const running = summary.clocks.running === color;
    box.append(el("span", { class: `clock-${color}` + (running ? " running" : "") },
      `${color === "white" ? "W" : "B"} ${summary.clocks[color]}`));
  }
  return box;
}

function linkText(summary) {
  const parts = [summary.status || "status ?", `board ${summary.link || "?"}`];
  if (summary.battery !== null && summary.battery !== undefined) parts.push(`${summary.battery}%`);
  if (summary.linkError) parts.push(summary.linkError);
  return parts.join(" · ");
}

function alertList(summary, withButtons) {
  const list = el("ul", { class: "alerts" });
  for (const alert of summary.alerts) {
    const item = el("li", { class: "alert", "data-alert": String(alert.id) },
      `${alert.kind.replaceAll("_", " ")} (Art. ${alert.article || "—"})`
      + (alert.color ? ` ${alert.color}` : "") + `, ply ${alert.ply}`);
    if (withButtons) {
      item.append(el("span", { class: "muted" }, ` ${alert.message}`));
      if (me.csrf) {
        const button = el("button", { type: "button", class: "ack" }, "Acknowledge");
        button.addEventListener("click", (event) => {
          event.stopPropagation();
          act(summary.table, "ack_alert", { id: alert.id });
        });
        item.append(button);
        // A board nothing explains, or several lines of moves: the arbiter says which was played.
        for (const line of alert.lines || []) {
          const record = el("button", { type: "button", class: "reconstruct" }, `Record ${line}`);
          record.addEventListener("click", (event) => {
            event.stopPropagation();
            act(summary.table, "reconstruct", { moves: line.split(" ") });
          });
          item.append(record);
        }
      }
    }
    list.append(item);
  }
  return list;
}

function card(summary) {
  const title = el("h2", {},
    el("span", {}, summary.board ? `Board ${summary.board}` : summary.table),
    el("span", { class: "muted" }, summary.table));
  const players = el("div", { class: "players" },
    `${summary.white || "?"} – ${summary.black || "?"}`);
  const img = el("img", { src: `/table/${encodeURIComponent(summary.table)}.svg?v=${summary.version}`,
    alt: `position at ${summary.table}`, width: 200, height: 200, loading: "lazy" });
  const down = summary.link !== "connected" || summary.status !== "online";
  const node = el("article", { class: "card" + (summary.alerts.length ? " has-alert" : ""),
    "data-table": summary.table },
    title, players, img, clocks(summary),
    el("div", { class: "last-move" }, summary.last || "no moves yet"),
    summary.result ? el("div", { class: "result" }, summary.result) : null,
    alertList(summary, false),
    summary.pushError ? el("div", { class: "alert push-error" }, `lichess: ${summary.pushError}`) : null,
    el("div", { class: "link" + (down ? " down" : "") }, linkText(summary)));
  node.addEventListener("click", () => { location.hash = `#/table/${encodeURIComponent(summary.table)}`; });
  return node;
}

function drawRoom() {
  const room = $("room");
  const sorted = [...tables.values()].sort((a, b) =>
    (Number(a.board) || 1e9) - (Number(b.board) || 1e9)
    || a.table.localeCompare(b.table, undefined, { numeric: true }));
  room.replaceChildren(...sorted.map(card));
  if (!sorted.length) room.append(el("p", { class: "muted" }, "waiting for tables…"));
}

function update(summaries, all) {
  if (all) tables.clear();
  for (const summary of summaries) tables.set(summary.table, summary);
  drawRoom();
  if (selected && summaries.some((s) => s.table === selected)) loadDetail();
}

// -- one table --------------------------------------------------------------------------------

async function loadDetail() {
  const id = selected;
  const answer = await fetch(`/api/table/${encodeURIComponent(id)}`);
  if (!answer.ok) { say(`table ${id}: ${(await answer.text()).trim()}`); return; }
  const table = await answer.json();
  if (id !== selected) return;
  $("detail-title").textContent = table.board ? `Board ${table.board} (${table.table})` : table.table;
  $("detail-players").textContent = `${table.white || "?"} – ${table.black || "?"}`
    + (table.event ? `, ${table.event}` : "") + (table.round ? `, round ${table.round}` : "");
  $("detail-board").src = `/table/${encodeURIComponent(id)}.svg?v=${table.version}`;
  $("detail-clocks").replaceChildren(clocks(table));
  $("detail-state").textContent = linkText(table) + (table.result ? ` · ${table.result}` : "");
  $("detail-open").replaceChildren(...alertList(table, true).children);
  if (!table.alerts.length) $("detail-open").append(el("li", { class: "muted" }, "none"));
  $("detail-notes").replaceChildren(...table.notes.map((note) => el("li", { class: "note" }, note)));
  $("detail-notes").hidden = !table.notes.length;
  $("detail-moves").replaceChildren(...moveItems(table));
  $("detail-history").replaceChildren(...table.alertLog.map((entry) =>
    el("li", { class: entry.closed ? "closed" : "" },
      `${time(entry.raised)} ${entry.kind.replaceAll("_", " ")} (Art. ${entry.article || "—"}) ply ${entry.ply}: ${entry.message}`
      + (entry.closed ? ` — closed ${time(entry.closed)}${entry.by ? " by " + entry.by : ""}` : " — open"))));
  $("detail-actions").replaceChildren(...table.actions.map((action) =>
    el("li", {}, `${time(action.at)} ${action.summary}${action.by ? " (" + action.by + ")" : ""}`)));
  $("actions").hidden = !me.csrf;
}

// The moves part by part (an illegal move that stood splits the broadcast where no legal move
// leads on): where each part begins and why, the broadcast's comments after each move (penalties,
// the arbiters' corrections), and how a part ended when another follows.
function moveItems(table) {
  const items = [];
  const parts = table.partList || [];
  for (const part of parts) {
    if (parts.length > 1 || part.lead.length) {
      const head = el("li", { class: "part-start", "data-part": String(part.part) },
        parts.length > 1 ? `Part ${part.part}` + (part.part > 1 ? `, from move ${moveNumber(part.firstPly)}` : "") : "");
      for (const text of part.lead) head.append(el("span", { class: "move-note" }, text));
      items.push(head);
    }
    for (const move of table.moves.filter((m) => m.part === part.part)) {
      const item = el("li", { class: move.final ? "move" : "move pending", "data-ply": String(move.ply) },
        `${move.label}` + (move.clock ? ` (${move.clock})` : "") + (move.final ? "" : " …"));
      for (const note of move.notes) item.append(el("span", { class: "move-note" }, note));
      items.push(item);
    }
    if (part.ending) items.push(el("li", { class: "part-end note", "data-part": String(part.part) }, part.ending));
  }
  if (!items.length) items.push(el("li", { class: "muted" }, "no moves yet"));
  return items;
}

function moveNumber(ply) {
  return Math.floor((ply + 1) / 2);
}

function route() {
  const match = location.hash.match(/^#\/table\/(.+)$/);
  selected = match ? decodeURIComponent(match[1]) : null;
  $("room").hidden = Boolean(selected);
  $("round").hidden = Boolean(selected) || !me.csrf;
  $("detail").hidden = !selected;
  if (selected) loadDetail();
}

// -- signing in and acting ---------------------------------------------------------------------

function drawAccount() {
  $("signin").hidden = !me.enabled || Boolean(me.name);
  $("signed-in").hidden = !me.name;
  $("read-only").hidden = me.enabled;
  $("me").textContent = me.name ? `signed in as ${me.name}` : "";
  $("actions").hidden = !me.csrf;
  $("round").hidden = Boolean(selected) || !me.csrf;
}

// -- a round: the pairings file to the tables (docs/rounds.md) ---------------------------------

let roundAsked = null;         // what the last preview showed: the start sends the same

async function roundBody() {
  const file = $("round-file").files[0];
  const pasted = $("round-text").value;
  const body = {
    pairings: file ? await file.text() : pasted,
    name: file ? file.name : "pasted CSV",
    round: Number($("round-number").value),
    venue: $("round-venue").value.trim() || null,
    new_games: $("round-new-games").checked,
  };
  return body;
}

function drawRound(data, started) {
  $("round-error").hidden = true;
  $("round-rows").replaceChildren(...data.rows.map((row) => {
    const rating = (r) => (r ? ` (${r})` : "");
    const said = (started ? row.said : row.said === "unchanged" ? "unchanged" : "will assign"
      + (row.seen ? "" : " (table not seen)")) + (row.forfeit ? `; forfeit ${row.forfeit} in the file` : "");
    return el("tr", { class: row.ok ? "ok" : "not", "data-board": String(row.board) },
      el("td", {}, String(row.board)), el("td", {}, row.table),
      el("td", {}, row.white + rating(row.whiteRating)), el("td", {}, row.black + rating(row.blackRating)),
      el("td", {}, said));
  }));
  $("round-table").hidden = false;
  $("round-unpaired").replaceChildren(...data.unpaired.map((u) => el("li", {}, `no board: ${u.name} (${u.why})`)));
  $("round-summary").textContent = started ? data.summary
    : `round ${data.round}: ${data.rows.length} boards, nothing sent yet`;
}

function roundError(text) {
  $("round-error").textContent = text;
  $("round-error").hidden = false;
  $("round-table").hidden = true;
  $("round-unpaired").replaceChildren();
  $("round-summary").textContent = "";
  $("round-start").disabled = true;
  roundAsked = null;
}

async function roundPreview() {
  const body = await roundBody();
  const { answer, data } = await post("/api/round/preview", body, me.csrf);
  if (!answer.ok) { roundError(data.error || String(answer.status)); return; }
  roundAsked = body;
  drawRound(data, false);
  $("round-start").disabled = false;
}

async function roundStart() {
  if (!roundAsked) return;
  const body = { ...roundAsked, new_games: $("round-new-games").checked };
  $("round-start").disabled = true;
  $("round-summary").textContent = "sending…";
  const { answer, data } = await post("/api/round/start", body, me.csrf);
  if (!answer.ok) { roundError(data.error || String(answer.status)); return; }
  drawRound(data, true);
}

async function post(url, body, csrf) {
  const headers = { "Content-Type": "application/json" };
  if (csrf) headers["X-CSRF-Token"] = csrf;
  const answer = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  let data = {};
  try { data = await answer.json(); } catch { data = { error: (await answer.text()).trim() }; }
  return { answer, data };
}

async function act(table, command, fields) {
  say(`${command}: sending…`, true);
  const { answer, data } = await post(`/api/table/${encodeURIComponent(table)}/${command}`, fields, me.csrf);
  if (!answer.ok) { say(`${command}: ${data.error || answer.status}`); return; }
  if (data.status !== "ok") { say(`${command} refused by ${table}: ${data.error}`); return; }
  say(`${command}: done`, true);
  if (selected) loadDetail();
}

function seconds(text) {
  const parts = text.trim().split(":").map(Number);
  if (!parts.length || parts.some((n) => !Number.isInteger(n) || n < 0)) return NaN;
  return parts.reduce((total, n) => total * 60 + n, 0);
}

function wire() {
  $("signin").addEventListener("submit", async (event) => {
    event.preventDefault();
    const { answer, data } = await post("/login",
      { name: $("signin-name").value, password: $("signin-password").value });
    $("signin-password").value = "";
    if (!answer.ok) { say(`sign-in: ${data.error}`); return; }
    me = { enabled: true, name: data.name, csrf: data.csrf };
    say("");
    drawAccount();
    drawRoom();
    if (selected) loadDetail();
  });
  $("signout").addEventListener("click", async () => {
    await post("/logout", {});
    me = { enabled: me.enabled, name: null, csrf: null };
    drawAccount();
    if (selected) loadDetail();
  });
  $("form-correct").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    act(selected, "correct_move", { ply: Number(form.ply.value), uci: form.uci.value.trim() });
  });
  $("form-reconstruct").addEventListener("submit", (event) => {
    event.preventDefault();
    const moves = event.target.moves.value.replaceAll(",", " ").split(/\s+/).filter(Boolean);
    act(selected, "reconstruct", { moves });
  });
  $("form-position").addEventListener("submit", (event) => {
    event.preventDefault();
    act(selected, "set_position", { fen: event.target.fen.value.trim() });
  });
  $("form-result").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    act(selected, "set_result", { result: form.result.value, reason: form.reason.value.trim() });
  });
  $("form-clock").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    const white = seconds(form.white.value), black = seconds(form.black.value);
    if (Number.isNaN(white) || Number.isNaN(black)) { say("clock times are h:mm:ss or m:ss"); return; }
    act(selected, "adjust_clock", { white, black, running: form.running.value || null });
  });
  $("form-round").addEventListener("submit", (event) => { event.preventDefault(); roundPreview(); });
  $("round-start").addEventListener("click", roundStart);
  for (const id of ["round-file", "round-text", "round-venue", "round-number"]) {
    $(id).addEventListener("input", () => { $("round-start").disabled = true; roundAsked = null; });
  }
  window.addEventListener("hashchange", route);
}

function listen() {
  const events = new EventSource("/events");
  events.addEventListener("tables", (event) => {
    const data = JSON.parse(event.data);
    update(data.tables, Boolean(data.all));
    if (data.push !== undefined) showPush(data.push);
  });
  events.addEventListener("open", () => { $("connection").textContent = "live"; $("connection").className = "pill"; });
  events.addEventListener("error", () => { $("connection").textContent = "reconnecting…"; $("connection").className = "pill bad"; });
}

function showPush(status) {
  $("push").hidden = !status;
  $("push").textContent = status ? `lichess: ${status}` : "";
}

async function start() {
  wire();
  const state = await (await fetch("/api/state")).json();
  me = state.me;
  showPush(state.push);
  drawAccount();
  update(state.tables, true);
  route();
  listen();
}

document.addEventListener("DOMContentLoaded", start);
