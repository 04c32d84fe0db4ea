// warband view: draws a recorded run from the server's JSON API. Plain JS and SVG, no library.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const TEAM_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"];
const MARKER_LETTERS = {
  spawn: "S", capture: "C", tsp: "T", regroup: "R", sniping: "N", defend: "D", hiding: "H",
  exit: "X", stack: "K", corner: "O", retrieval: "Q", return: "B", target: "Y",
};
const TYPE_COLOURS = {
  Order: "#1f77b4", CompletionReport: "#2ca02c", ThreatReport: "#d62728",
  StatusReport: "#7f7f7f", Act: "#8c564b", ActResult: "#c49c94", Percept: "#bcbd22",
};
// The clock's and the world's traffic: every agent, every tick; hidden unless asked for.
const RUNTIME_TYPES = new Set(["Tick", "TickDone", "Percept", "Act", "ActResult"]);
const SCALE = 10;
const MARGIN = 20;

const state = {
  summary: null, tick: 0, ticks: [], playing: false, timer: null, selected: null,
  frameRequest: 0,
};

function $(id) { return document.getElementById(id); }

function el(name, attrs, parent, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

async function getJson(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function teamColour(team) {
  const teams = (state.summary.map && state.summary.map.teams) || [];
  const index = teams.indexOf(team);
  return index < 0 ? "#7f7f7f" : TEAM_COLOURS[index % TEAM_COLOURS.length];
}

// Map coordinates to SVG pixels: y grows up on the map, down on the screen.
function px(x, y) {
  const [minX, , , maxY] = state.summary.map.bounds;
  return [(x - minX) * SCALE + MARGIN, (maxY - y) * SCALE + MARGIN];
}

// The map's width in the drawing's units (its viewBox is 0 0 width height).
function mapWidth() {
  const [minX, , maxX] = state.summary.map.bounds;
  return (maxX - minX) * SCALE + 2 * MARGIN;
}

function drawMapBase() {
  const svg = $("map");
  svg.innerHTML = "";
  const map = state.summary.map;
  if (!map) {
    el("text", { x: 10, y: 20 }, svg, state.summary.following
      ? "waiting for the run's first world snapshot..." : "this run has no world: no map to draw");
    svg.setAttribute("viewBox", "0 0 400 40");
    return;
  }
  const [minX, minY, maxX, maxY] = map.bounds;
  svg.setAttribute("viewBox", `0 0 ${mapWidth()} ${(maxY - minY) * SCALE + 2 * MARGIN}`);
  const where = {};
  for (const w of map.waypoints) where[w.id] = w;
  state.waypoints = where;
  const base = el("g", { id: "map-base" }, svg);
  for (const [a, b] of map.links) {
    const [x1, y1] = px(where[a].x, where[a].y);
    const [x2, y2] = px(where[b].x, where[b].y);
    el("line", { x1, y1, x2, y2, stroke: "#aaa", "stroke-width": 1.5 }, base);
  }
  for (const [[ax, ay], [bx, by]] of map.walls) {
    const [x1, y1] = px(ax, ay);
    const [x2, y2] = px(bx, by);
    el("line", { x1, y1, x2, y2, stroke: "#333", "stroke-width": 3 }, base);
  }
  for (const w of map.waypoints) {
    const [cx, cy] = px(w.x, w.y);
    const dot = el("circle", { cx, cy, r: 3, fill: "#ccc", stroke: "#888" }, base);
    el("title", {}, dot, w.id);
  }
  const stacked = {};
  for (const m of map.markers) {
    const w = where[m.waypoint];
    const slot = stacked[m.waypoint] || 0;
    stacked[m.waypoint] = slot + 1;
    const [x, y] = px(w.x, w.y);
    const text = el("text", {
      x: x + 5 + slot * 8, y: y + 10, "font-size": 10, "font-weight": "bold",
      fill: m.team ? teamColour(m.team) : "#444", class: "marker", "data-marker": m.id,
    }, base, MARKER_LETTERS[m.kind] || "?");
    el("title", {}, text, `${m.id} (${m.kind})`);
  }
  el("g", { id: "map-dynamic" }, svg);
}

// Pixels from one agent's label to the next on a shared spot: its name line and its task line.
const LABEL_LINES = 23;

function drawFrame(frame) {
  const layer = $("map-dynamic");
  if (!layer) return;
  layer.innerHTML = "";
  const map = state.summary.map;
  const where = state.waypoints;
  if ($("show-influence").checked) drawInfluence(layer, frame.influence);
  if ($("show-corridors").checked) drawCorridors(layer, frame.corridors);
  // Capture points: a ring in the holding team's colour.
  for (const m of map.markers) {
    if (!(m.id in frame.captures)) continue;
    const w = where[m.waypoint];
    const [cx, cy] = px(w.x, w.y);
    const holder = frame.captures[m.id];
    const ring = el("circle", {
      cx, cy, r: 9, fill: "none", "stroke-width": 3, class: "capture",
      stroke: holder ? teamColour(holder) : "#999", "stroke-dasharray": holder ? "" : "3 2",
    }, layer);
    el("title", {}, ring, `${m.id}: ${holder || "held by nobody"}`);
  }
  for (const o of map.objects) {
    const s = frame.objects[o.id] || {};
    const open = s.open !== undefined ? s.open : o.open;
    if (o.link) {
      const a = where[o.link[0]], b = where[o.link[1]];
      const [x, y] = px((a.x + b.x) / 2, (a.y + b.y) / 2);
      const door = el("rect", { x: x - 4, y: y - 4, width: 8, height: 8,
        fill: open ? "#2ca02c" : "#8c564b", class: "object" }, layer);
      el("title", {}, door, `${o.id} (${o.kind}, ${open ? "open" : "closed"})`);
    } else {
      const at = where[s.waypoint || o.waypoint];
      if (!at) continue;
      const [x, y] = px(at.x, at.y);
      const item = el("circle", { cx: x - 6, cy: y - 6, r: 3, fill: "#e377c2", class: "object" },
        layer);
      el("title", {}, item, `${o.id} (${o.kind})`);
    }
  }
  for (const [id, t] of Object.entries(frame.turrets)) {
    if (t.x === undefined) continue;
    const [x, y] = px(t.x, t.y);
    el("rect", { x: x - 3, y: y - 3, width: 6, height: 6, fill: teamColour(t.team) }, layer);
  }
  // Agents on the same spot (a squad at a waypoint, the dead where they fell) are spread on a
  // small ring so that each can be seen and clicked.
  const stacks = {};
  for (const a of Object.values(frame.agents)) {
    if (a.x !== undefined) stacks[`${a.x},${a.y}`] = (stacks[`${a.x},${a.y}`] || 0) + 1;
  }
  const placed = {};
  for (const [id, a] of Object.entries(frame.agents)) {
    if (a.x === undefined) continue;
    const spot = `${a.x},${a.y}`;
    const slot = placed[spot] = (placed[spot] || 0) + 1;
    const [sx, sy] = px(a.x, a.y);
    let [x, y] = [sx, sy];
    // Alone, the label sits beside the disc; on a shared spot the labels (name, then task)
    // stand one under the other beside the ring, else they are written over each other.
    let [lx, ly] = [x + 9, y - 4];
    if (stacks[spot] > 1) {
      const angle = 2 * Math.PI * (slot - 1) / stacks[spot];
      x += 9 * Math.cos(angle);
      y += 9 * Math.sin(angle);
      lx = sx + 20;
      ly = sy - 4 + (slot - 1 - (stacks[spot] - 1) / 2) * LABEL_LINES;
    }
    const alive = (a.state || "alive") === "alive";
    const colour = alive ? teamColour(a.team) : "#bbb";
    const group = el("g", { class: "agent-group" }, layer);
    const heading = a.heading || 0;  // radians, counter-clockwise from +x on the map
    el("line", { x1: x, y1: y, x2: x + 12 * Math.cos(heading), y2: y - 12 * Math.sin(heading),
      stroke: colour, "stroke-width": 2 }, group);
    const circle = el("circle", {
      cx: x, cy: y, r: 7, fill: colour, class: "agent" + (state.selected === id ? " selected" : ""),
      "data-agent": id,
    }, group);
    el("title", {}, circle,
      `${id}: ${a.team} ${a["class"]}, health ${a.health}/${a.max_health}, ${a.state}` +
      (a.task ? `, doing ${a.task}` : ""));
    circle.addEventListener("click", () => select(id));
    const health = a.max_health ? a.health / a.max_health : 0;
    el("rect", { x: x - 8, y: y + 9, width: 16, height: 3, fill: "#ddd" }, group);
    el("rect", { x: x - 8, y: y + 9, width: 16 * health, height: 3, fill: "#2ca02c" }, group);
    // Labels face into the map: on its right half they end left of the agent, or the
    // right-hand team's labels run past the map's edge and are clipped.
    const east = sx > mapWidth() / 2;
    const at = { x: east ? 2 * sx - lx : lx, "text-anchor": east ? "end" : "start" };
    el("text", { ...at, y: ly, class: "agent-label", fill: colour }, group,
      `${id} ${a["class"] || ""} ${a.health}`);
    if (a.task) el("text", { ...at, y: ly + 11, class: "task-label" }, group, a.task);
  }
  const scores = Object.entries(frame.scores).map(([t, s]) => `${t} ${s}`).join(" : ");
  $("scores").textContent = (frame.mode ? frame.mode + "  " : "") + scores +
    (frame.outcome ? `  (${JSON.stringify(frame.outcome)})` : "");
}

// One team's influence map per area (the first team that has one), as render draws it: discs
// on the area's waypoints in that team's colour where it dominates, the enemy's where they do.
function drawInfluence(layer, influence) {
  const teams = Object.keys(influence || {});
  if (!teams.length) return;
  const mapTeams = state.summary.map.teams;
  teams.sort((a, b) => (mapTeams.indexOf(a) < 0) - (mapTeams.indexOf(b) < 0) || a.localeCompare(b));
  const team = teams[0];
  const other = mapTeams.find(t => t !== team);
  const values = influence[team];
  const peak = Math.max(0, ...Object.values(values).map(Math.abs));
  if (!peak) return;
  for (const [areaId, value] of Object.entries(values)) {
    const area = state.summary.map.areas[Number(areaId)];
    if (!area) continue;
    for (const wp of area.waypoints) {
      const [cx, cy] = px(waypointAt(wp).x, waypointAt(wp).y);
      const disc = el("circle", { cx, cy, r: 3 * SCALE, class: "influence",
        fill: teamColour(value > 0 ? team : other), "fill-opacity": 0.4 * Math.abs(value) / peak,
      }, layer);
      el("title", {}, disc, `influence ${value.toFixed(2)} (${team}), area ${areaId}`);
    }
  }
}

function drawCorridors(layer, corridors) {
  Object.keys(corridors || {}).sort().forEach((squad, index) => {
    const centres = corridors[squad].map(a => state.summary.map.areas[Number(a)]).filter(a => a)
      .map(a => px(a.centre[0], a.centre[1]));
    if (!centres.length) return;
    const colour = TEAM_COLOURS[(index + 2) % TEAM_COLOURS.length];
    el("polyline", { points: centres.map(p => p.join(",")).join(" "), fill: "none",
      stroke: colour, "stroke-width": 4, "stroke-dasharray": "8 4", "stroke-opacity": 0.8,
      class: "corridor", "data-squad": squad }, layer);
    el("text", { x: centres[0][0], y: centres[0][1], fill: colour, "font-size": 10 }, layer,
      `corridor ${squad}`);
  });
}

function waypointAt(id) { return state.waypoints[id]; }

function drawCommanders(tables) {
  const box = $("commanders");
  box.innerHTML = "";
  const names = Object.keys(tables);
  if (!names.length) { box.textContent = "no commander in this run"; return; }
  for (const name of names) {
    const t = tables[name];
    const h = document.createElement("h3");
    h.textContent = name;
    box.appendChild(h);
    const rows = [["objective", "task", "squads (members)"]];
    for (const [objective, kind] of t.objectives) {
      const squads = t.squads.filter(s => s.objective === objective)
        .map(s => `${s.squad} (${s.members.join(", ")})`).join("; ");
      rows.push([objective, kind, squads || "-"]);
    }
    for (const s of t.squads) {
      if (!t.objectives.some(([o]) => o === s.objective)) {
        rows.push([s.objective, "", `${s.squad} (${s.members.join(", ")})`]);
      }
    }
    box.appendChild(table(rows, "assignment-" + name));
    const extra = [];
    if (t.free.length) extra.push("in no squad: " + t.free.join(", "));
    const direct = Object.entries(t.direct).map(([bot, o]) => `${bot} ${o.join(" ")}`);
    if (direct.length) extra.push("direct orders: " + direct.join("; "));
    if (extra.length) {
      const p = document.createElement("p");
      p.textContent = extra.join(" / ");
      box.appendChild(p);
    }
  }
}

function table(rows, id) {
  const t = document.createElement("table");
  t.id = id;
  rows.forEach((row, i) => {
    const tr = document.createElement("tr");
    for (const cell of row) {
      const c = document.createElement(i === 0 ? "th" : "td");
      c.textContent = cell;
      tr.appendChild(c);
    }
    t.appendChild(tr);
  });
  return t;
}

async function drawMessages() {
  const params = new URLSearchParams({ tick: state.tick, before: $("filter-before").value || 0 });
  if ($("filter-agent").value) params.set("agent", $("filter-agent").value);
  if ($("filter-type").value) params.set("type", $("filter-type").value);
  const conversation = $("filter-conversation").value.trim();
  if (conversation) params.set("conversation", conversation);
  const answer = await getJson("/api/messages?" + params);
  const hideRuntime = $("filter-runtime").checked && !$("filter-type").value;
  const messages = answer.messages.filter(m =>
    !hideRuntime || !(RUNTIME_TYPES.has(m.type) || m.type.startsWith("_")));
  const shown = messages.slice(-150);
  $("message-count").textContent = `${messages.length} messages` +
    (shown.length < messages.length ? ` (last ${shown.length} drawn)` : "");
  const svg = $("sequence");
  svg.innerHTML = "";
  const names = [];
  for (const m of shown) for (const n of [m.sender, m.recipient]) {
    if (!names.includes(n)) names.push(n);
  }
  const columnWidth = 110, rowHeight = 18, top = 30, left = 40;
  const width = left + Math.max(1, names.length) * columnWidth;
  const height = top + shown.length * rowHeight + 10;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("height", Math.min(height, 600));
  const x = name => left + names.indexOf(name) * columnWidth + columnWidth / 2;
  names.forEach(n => {
    el("text", { x: x(n), y: 14, "text-anchor": "middle", "font-size": 11, class: "participant" },
      svg, n);
    el("line", { x1: x(n), y1: 20, x2: x(n), y2: height, class: "lifeline" }, svg);
  });
  const rowOf = {};
  let lastTick = null;
  shown.forEach((m, i) => {
    const y = top + i * rowHeight;
    rowOf[m.id] = y;
    if (m.tick !== lastTick) {
      el("text", { x: 2, y: y + 4, "font-size": 9, fill: "#999" }, svg, `t${m.tick}`);
      lastTick = m.tick;
    }
    const g = el("g", { class: "msg", "data-type": m.type, "data-id": m.id }, svg);
    const colour = TYPE_COLOURS[m.type] || "#555";
    const x1 = x(m.sender), x2 = x(m.recipient);
    el("line", { x1, y1: y, x2: x2 + (x2 > x1 ? -4 : 4), y2: y, stroke: colour,
      "stroke-width": 1.5, "stroke-dasharray": m.delivered ? "" : "2 2" }, g);
    el("path", { d: `M${x2},${y} l${x2 > x1 ? -6 : 6},-3 v6 z`, fill: colour }, g);
    el("text", { x: (x1 + x2) / 2, y: y - 3, "text-anchor": "middle", class: "msg-label",
      fill: colour }, g, m.type);
    el("title", {}, g, `${m.id}: ${m.sender} -> ${m.recipient} ${m.type} at tick ${m.tick}` +
      (m.conversation ? ` [${m.conversation}]` : "") +
      (m.reply_to ? `, answers ${m.reply_to}` : "") +
      (m.replies.length ? `, answered by ${m.replies.join(", ")}` : "") +
      (m.delivered ? "" : " (never received)"));
  });
  // An order and its completion report (any message and its reply) joined on the left.
  for (const m of shown) {
    if (!m.reply_to || !(m.reply_to in rowOf)) continue;
    const y1 = rowOf[m.reply_to], y2 = rowOf[m.id];
    el("path", { d: `M${left - 4},${y1} C${left - 30},${y1} ${left - 30},${y2} ${left - 4},${y2}`,
      class: "reply-link", "data-from": m.reply_to, "data-to": m.id }, svg);
  }
}

async function inspect() {
  if (!state.selected) return;
  const found = await getJson(
    `/api/inspect?agent=${encodeURIComponent(state.selected)}&tick=${state.tick}`);
  $("inspector-agent").textContent = `${found.agent} at tick ${found.tick}`;
  const body = found.body;
  $("inspector-task").textContent = (body ? `${body.team} ${body["class"]}, health ` +
    `${body.health}/${body.max_health}, ${body.state}. ` : "") +
    (found.task ? `Doing: ${found.task}` : "");
  $("inspector-text").textContent = found.text;
}

function select(agent) {
  state.selected = agent;
  $("inspect-agent").value = agent;
  document.querySelectorAll(".agent").forEach(c =>
    c.classList.toggle("selected", c.dataset.agent === agent));
  inspect().catch(showError);
}

async function show(tick) {
  state.tick = tick;
  $("scrubber").value = tick;
  $("tick-label").textContent = tick;
  const request = ++state.frameRequest;
  const frame = await getJson(`/api/frame?tick=${tick}`);
  if (request !== state.frameRequest) return;  // a newer tick was asked for meanwhile
  drawFrame(frame);
  drawCommanders(frame.commanders);
  await Promise.all([drawMessages(), inspect(), drawMeasures()]);
  document.body.dataset.shownTick = tick;
}

// The per-tick measures of `warband metrics` for one team: how many bots each counts here, and
// which (ringed on the map).
const MEASURE_NAMES = {
  stuck: "stuck", order_starved: "order-starved", crowded: "crowded",
  enemies_ignored: "enemies ignored",
};

async function drawMeasures() {
  let found;
  try {
    found = await getJson(`/api/measures?tick=${state.tick}`);
  } catch (error) {
    found = { teams: {}, as_of: null, problem: error.message };
  }
  const teams = Object.keys(found.teams);
  fillSelect($("measures-team"), teams);
  const team = $("measures-team").value || teams[0];
  const flags = found.teams[team] || {};
  const rows = Object.entries(MEASURE_NAMES).map(([key, name]) =>
    [name, String((flags[key] || []).length), (flags[key] || []).join(" ")]);
  const box = $("measures");
  box.textContent = "";
  box.appendChild(table([["measure", "bots", "which"], ...rows], "measures-table"));
  $("measures-as-of").textContent = found.problem ? found.problem :
    found.as_of !== null && found.as_of < state.tick ? `(worked out to tick ${found.as_of})` : "";
  const flagged = new Set(Object.values(flags).flat());
  document.querySelectorAll(".agent").forEach(c =>
    c.classList.toggle("flagged", flagged.has(c.dataset.agent)));
}

function showError(error) {
  $("inspector-text").textContent = "error: " + error.message;
}

function setPlaying(playing) {
  state.playing = playing;
  $("play").innerHTML = playing ? "&#10074;&#10074; pause" : "&#9654; play";
  clearTimeout(state.timer);
  if (playing) tickOn();
}

function tickOn() {
  if (!state.playing) return;
  if (state.tick >= state.summary.last_tick) { setPlaying(false); return; }
  show(state.tick + 1).catch(showError).finally(() => {
    state.timer = setTimeout(tickOn, 1000 / Number($("speed").value));
  });
}

function fillSelect(select, values) {
  const known = new Set(Array.from(select.options, o => o.value));
  for (const v of values) {
    if (known.has(v)) continue;
    const option = document.createElement("option");
    option.value = option.textContent = v;
    select.appendChild(option);
  }
}

async function start() {
  state.summary = await getJson("/api/summary");
  const s = state.summary;
  $("title").textContent = `warband view: ${s.map ? s.map.name : ""} ${s.log_dir}`;
  $("scrubber").min = s.first_tick;
  $("scrubber").max = s.last_tick;
  $("last-tick").textContent = s.last_tick;
  fillSelect($("filter-agent"), s.agents);
  // Squads and commanders have no body on the map: they are picked from this list.
  fillSelect($("inspect-agent"), s.agents);
  $("inspect-agent").addEventListener("change", e => { if (e.target.value) select(e.target.value); });
  fillSelect($("filter-type"), s.message_types);
  drawMapBase();
  $("scrubber").addEventListener("input", e => show(Number(e.target.value)).catch(showError));
  $("play").addEventListener("click", () => setPlaying(!state.playing));
  $("step-back").addEventListener("click", () =>
    show(Math.max(s.first_tick, state.tick - 1)).catch(showError));
  $("step-forward").addEventListener("click", () =>
    show(Math.min(s.last_tick, state.tick + 1)).catch(showError));
  for (const id of ["filter-agent", "filter-type", "filter-before", "filter-runtime",
    "filter-conversation"]) {
    $(id).addEventListener("change", () => drawMessages().catch(showError));
  }
  $("measures-team").addEventListener("change", () => drawMeasures().catch(showError));
  for (const id of ["show-influence", "show-corridors"]) {
    $(id).addEventListener("change", () => show(state.tick).catch(showError));
  }
  document.addEventListener("keydown", e => {
    if (e.key === " " && e.target.tagName !== "INPUT") { e.preventDefault(); $("play").click(); }
  });
  await show(s.first_tick);
  document.body.dataset.ready = "true";
  if (s.following) follow();
}

// A run still writing its logs: the server says when its timeline grew; the page takes the new
// ticks in and, while "follow the run" is ticked, shows the latest.
function follow() {
  $("follow-box").hidden = false;
  const updates = new EventSource("/api/updates");
  updates.addEventListener("update", () => refresh().catch(showError));
}

async function refresh() {
  const had = state.summary;
  const s = state.summary = await getJson("/api/summary");
  if (s.map && !had.map) drawMapBase();
  $("scrubber").min = s.first_tick;
  $("scrubber").max = s.last_tick;
  $("last-tick").textContent = s.last_tick;
  fillSelect($("filter-agent"), s.agents);
  fillSelect($("inspect-agent"), s.agents);
  fillSelect($("filter-type"), s.message_types);
  // A live run drops events rather than wait for a lagging viewer: say how many.
  $("dropped").hidden = !s.dropped;
  $("dropped").textContent = s.dropped ? `${s.dropped} events dropped` : "";
  if ($("follow-live").checked && !state.playing && s.last_tick !== state.tick) {
    await show(s.last_tick);
  } else if (s.map && !had.map) {
    await show(state.tick);
  }
}

start().catch(showError);
