/* graphmem memory inspector. Plain JavaScript, no build step; cytoscape.js (vendored) draws the graph.
 * The API key lives in sessionStorage only and travels in the X-API-Key header, never in a URL.
 * Untrusted text (memories, names) is only ever set as textContent, never parsed as HTML. */
"use strict";

const KEY_SLOT = "graphmem-inspector-key";
/** Above this many entities drawn, the drawing shows the neighbourhood of one entity only. */
const DRAW_LIMIT = 250;
/** Rows of the relation list written at once (the filter narrows the rest). */
const LIST_LIMIT = 500;
const PALETTE = ["#2458c6", "#c0392b", "#16a085", "#8e44ad", "#d68910", "#2e86c1", "#7d6608", "#c2185b", "#138d75", "#6c3483"];

const state = { user: null, asOf: null, knownAt: null, graph: null, focus: null, span: null, entity: null, auth: true };
const $ = (id) => document.getElementById(id);
window.inspectorTimes = {};

// --- API -----------------------------------------------------------------------------------------

async function api(method, path, params, body) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== "") url.searchParams.set(k, v);
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(KEY_SLOT);
  if (key) headers["X-API-Key"] = key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  } catch (err) {
    throw new ApiError(0, `the server did not answer (${err.message})`);
  }
  const text = await response.text();
  if (!response.ok) throw new ApiError(response.status, describe(text, response.statusText));
  return { text, json: () => JSON.parse(text) };
}

class ApiError extends Error {
  constructor(status, message) { super(status ? `${status}: ${message}` : message); this.status = status; }
}

function describe(text, fallback) {
  try {
    const detail = JSON.parse(text).detail;
    if (typeof detail === "string") return detail;
    return JSON.stringify(detail);
  } catch (_) { return fallback || "request failed"; }
}

async function getJson(path, params) { return (await api("GET", path, params)).json(); }

// --- messages ------------------------------------------------------------------------------------

function showError(err) {
  const box = $("error");
  box.textContent = err instanceof Error ? err.message : String(err);
  box.hidden = false;
  if (err && err.status === 401) askKey();
}
function clearError() { $("error").hidden = true; $("error").textContent = ""; }
function status(text) { $("status").textContent = text; }
async function guarded(task) {
  clearError();
  try { await task(); } catch (err) { showError(err); }
}

// --- key and session -----------------------------------------------------------------------------

function askKey() {
  $("key-form").hidden = false;
  $("api-key").focus();
}

async function startSession() {
  try {
    const who = await getJson("/ui/api/session");
    state.auth = who.auth;
    $("who").textContent = who.auth ? `key "${who.tenant}": ${who.users}` : "no key needed (--no-auth)";
    $("key-form").hidden = true;
    $("forget-key").hidden = !sessionStorage.getItem(KEY_SLOT);
    return true;
  } catch (err) {
    if (err.status === 401) { askKey(); return false; }
    showError(err);
    return false;
  }
}

// --- opening a user ------------------------------------------------------------------------------

function clearUser() {
  state.graph = null; state.entity = null;
  $("main").hidden = true;
  for (const id of ["memories", "relations", "timeline"]) $(id).tBodies[0].replaceChildren();
  $("entity-memories").replaceChildren();
  $("history").hidden = true;
  if (window.inspectorCy) { window.inspectorCy.destroy(); window.inspectorCy = null; }
}

async function openUser(user, asOf, knownAt) {
  clearError();
  clearUser();
  state.user = user; state.asOf = asOf || null; state.knownAt = knownAt || null; state.focus = null;
  $("user-id").value = user;
  rememberInUrl();
  status(`loading ${user}…`);
  try {
    await Promise.all([listMemories(), loadGraph()]);
  } catch (err) {
    clearUser();
    status("");
    showError(err);
    return;
  }
  $("main").hidden = false;
  status(`user ${user}`);
  if (state.asOf || state.knownAt) selectTab("graph");  // a moment is the graph's: memories do not time-travel
  if (state.graph) drawGraph();
}

// The graph's time travel (as_of, known_at) is not the memories': say so where they are listed,
// instead of showing today's memories under a moment the user chose.
function noteMemoriesTime() {
  const note = $("memories-time-note");
  const moment = (state.asOf ? `as of ${short(state.asOf)}` : "") +
    (state.knownAt ? `${state.asOf ? ", " : ""}as graphmem knew it at ${short(state.knownAt)}` : "");
  note.hidden = !moment;
  note.textContent = moment
    ? `The Graph tab shows the graph ${moment}; memories are listed as they are now (they do not time-travel). ` +
      "Now on the Graph tab clears the moment."
    : "";
}

function rememberInUrl() {
  noteMemoriesTime();
  const url = new URL(location.href);
  url.search = "";
  if (state.user) url.searchParams.set("user_id", state.user);
  if (state.asOf) url.searchParams.set("as_of", state.asOf);
  if (state.knownAt) url.searchParams.set("known_at", state.knownAt);
  history.replaceState(null, "", url);
}

// --- memories ------------------------------------------------------------------------------------

async function listMemories() {
  const data = await getJson("/ui/api/memories", {
    user_id: state.user, include_invalidated: $("show-retired-memories").checked, filters: $("filters").value.trim(),
  });
  const more = data.results.length > LIST_LIMIT ? ` (the first ${LIST_LIMIT} shown: search or filter for the rest)` : "";
  $("memories-caption").textContent = `${count(data.results.length, "memory", "memories")}${more}`;
  renderMemories(data.results, false);
}

async function searchMemories() {
  const query = $("query").value.trim();
  if (!query) return listMemories();
  const filters = $("filters").value.trim();
  const body = { query, user_id: state.user, limit: 50 };
  if (filters) {
    try { body.filters = JSON.parse(filters); } catch (err) { throw new Error(`metadata filters are not JSON: ${err.message}`); }
  }
  const data = (await api("POST", "/search", null, body)).json();
  let hits = data.results;
  if (!$("show-retired-memories").checked) hits = hits.filter((m) => !m.invalid_at);
  $("memories-caption").textContent = `${count(hits.length, "hit", "hits")} for “${query}” (fused score, then each signal)`;
  renderMemories(hits, true);
}

function renderMemories(items, scored) {
  const rows = items.slice(0, LIST_LIMIT).map((m) => {
    const tr = document.createElement("tr");
    if (m.invalid_at) tr.className = "retired";
    tr.dataset.id = m.id;
    tr.append(cell(m.memory), scoreCell(m, scored), cell(span(m.valid_at, m.invalid_at)),
      cell(`${short(m.created_at)} / ${short(m.updated_at)}`), cell(m.metadata ? JSON.stringify(m.metadata) : ""),
      actionsCell(m));
    return tr;
  });
  $("memories").tBodies[0].replaceChildren(...rows);
}

function scoreCell(m, scored) {
  const td = document.createElement("td");
  if (!scored || m.score === undefined) return td;
  td.append(document.createTextNode(Number(m.score).toFixed(4)));
  const parts = Object.entries(m.scores || {}).map(([k, v]) => `${k} ${Number(v).toFixed(3)}`);
  const small = document.createElement("div");
  small.className = "scores";
  small.textContent = parts.join(" · ");
  td.append(small);
  return td;
}

function actionsCell(m) {
  const td = document.createElement("td");
  td.append(button("History", `history of memory: ${m.memory}`, () => guarded(() => showHistory(m))));
  if (!m.invalid_at) {
    td.append(" ", button("Delete…", `delete memory: ${m.memory}`, () => confirmThen(
      `Delete the memory “${m.memory}”? Its history keeps a DELETE event.`, () => deleteMemory(m))));
  }
  return td;
}

async function showHistory(m) {
  const events = await getJson("/ui/api/history", { user_id: state.user, memory_id: m.id });
  const rows = events.map((e) => row([e.event, e.old_memory || "", e.new_memory || "", short(e.created_at || e.updated_at)]));
  const box = $("history");
  box.querySelector("tbody").replaceChildren(...rows);
  $("history-title").textContent = `History of “${m.memory}”`;
  box.hidden = false;
  $("history-title").scrollIntoView({ block: "nearest" });
}

async function deleteMemory(m) {
  await api("DELETE", "/ui/api/memory", { user_id: state.user, memory_id: m.id });
  status(`deleted memory ${m.id}`);
  await listMemories();
}

// --- graph ---------------------------------------------------------------------------------------

async function loadGraph() {
  const started = performance.now();
  const response = await api("GET", "/ui/api/graph", { user_id: state.user, as_of: state.asOf, known_at: state.knownAt });
  const graph = response.json();
  window.inspectorTimes.graphBytes = response.text.length;
  window.inspectorTimes.graphFetchMs = performance.now() - started;
  state.graph = graph;
  state.span = timeSpan(graph.relations);
  const names = graph.entities.map((e) => option(e.name));
  $("entity-names").replaceChildren(...names);
  syncSlider();
  renderRelations();
}

function timeSpan(relations) {
  const times = [];
  for (const r of relations) for (const t of [r.valid_at, r.invalid_at, r.created_at]) if (t) times.push(Date.parse(t));
  const now = Date.now();
  const first = times.length ? Math.min(...times) : now - 86400000;
  return { first: first - 86400000, last: Math.max(now, ...times) };
}

function syncSlider() {
  const { first, last } = state.span;
  const at = state.asOf ? Date.parse(state.asOf) : last;
  $("as-of-slider").value = String(Math.round(((at - first) / (last - first)) * 1000));
  $("as-of-label").textContent = state.asOf ? short(state.asOf) : "now";
  $("as-of").value = state.asOf || "";
  $("known-at").value = state.knownAt || "";
}

function sliderMoved(final) {
  const { first, last } = state.span;
  const value = Number($("as-of-slider").value);
  // whole seconds: a readable instant (no milliseconds) in the label, the URL and the Date field
  const at = value >= 1000 ? null : new Date(Math.round((first + ((last - first) * value) / 1000) / 1000) * 1000).toISOString().replace(".000Z", "Z");
  $("as-of-label").textContent = at ? short(at) : "now";
  if (final) setAsOf(at);
}

// The slider's moments are exact instants (toISOString), and the graph holds every relation version:
// moving it re-marks the relations here, without a request (at 5,000 entities the request was 1-3.5 s)
async function setAsOf(at) {
  if (!state.graph) { await setTimes(at, state.knownAt); return; }
  state.asOf = at;
  rememberInUrl();
  window.inspectorTimes.graphFetchMs = 0;
  markHolding();
  syncSlider();
  renderRelations();
  drawGraph();
}

// as_of: when a fact held; known_at: what graphmem had learnt by then (facts learnt later left out).
// Typed times go to the server, which reads every format graphmem accepts and refuses bad ones.
async function setTimes(asOf, knownAt) {
  if (asOf === null && knownAt === null && state.knownAt === null && state.graph) { await setAsOf(null); return; }
  state.asOf = asOf;
  state.knownAt = knownAt;
  rememberInUrl();
  await guarded(async () => { await loadGraph(); drawGraph(); });
}

// graphmem's time rule (graphmem.stores.base.relation_visible), ported; the inspector test checks
// that it marks the relations as the server does
function holdsAt(r, asOf, knownAt, now) {
  const t = (s) => (s ? Date.parse(s) : null);
  const valid = t(r.valid_at), created = t(r.created_at), expired = t(r.expired_at);
  let invalid = t(r.invalid_at);
  if (knownAt !== null) {
    if (created !== null && created > knownAt) return false;
    if (expired !== null && expired <= knownAt) return false;
    if (expired !== null) invalid = null;  // an end learnt later was not known then
  }
  const at = asOf ?? knownAt ?? now;
  return (valid === null || valid <= at) && (invalid === null || at < invalid);
}

function markHolding() {
  const asOf = state.asOf ? Date.parse(state.asOf) : null;
  const knownAt = state.graph.known_at ? Date.parse(state.graph.known_at) : null;  // as the server read it
  const now = Date.now();
  for (const r of state.graph.relations) r.holds = holdsAt(r, asOf, knownAt, now);
}
window.inspectorHoldsAt = (asOf) => {
  const saved = state.asOf;
  state.asOf = asOf;
  markHolding();
  const out = Object.fromEntries(state.graph.relations.map((r) => [r.id, r.holds]));
  state.asOf = saved;
  markHolding();
  return out;
};

function shownRelations() {
  const retired = $("show-retired").checked;
  return state.graph.relations.filter((r) => r.holds || retired);
}

function renderRelations() {
  const needle = $("relation-filter").value.trim().toLowerCase();
  let shown = shownRelations();
  if (needle) shown = shown.filter((r) => `${r.source} ${r.relationship} ${r.destination}`.toLowerCase().includes(needle));
  const rows = shown.slice(0, LIST_LIMIT).map((r) => {
    const tr = document.createElement("tr");
    if (!r.holds) tr.className = "retired";
    tr.dataset.id = r.id;
    tr.append(entityCell(r.source), cell(r.relationship), entityCell(r.destination), cell(short(r.valid_at)),
      cell(short(knownEnd(r))), cell(r.holds ? "holds" : "retired"));
    return tr;
  });
  $("relations").tBodies[0].replaceChildren(...rows);
  $("relations-more").textContent = shown.length > LIST_LIMIT ? `${shown.length - LIST_LIMIT} more: narrow the filter` : "";
}

// a relation's end as known at known_at: an end graphmem learnt later was not known then
function knownEnd(r) {
  if (state.knownAt && r.expired_at && Date.parse(r.expired_at) > Date.parse(state.knownAt)) return "";
  return r.invalid_at;
}

function drawGraph() {
  if (typeof cytoscape !== "function") { showError(new Error("the graph library did not load")); return; }
  const started = performance.now();
  state.drawnHidden = $("panel-graph").hidden || $("main").hidden;
  const { nodes, edges, note, centre } = drawnElements();
  if (window.inspectorCy) window.inspectorCy.destroy();
  const cy = cytoscape({
    container: $("cy"), elements: [...nodes, ...edges], style: graphStyle(), wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 1.6,
    layout: layoutFor(nodes.length, centre),
  });
  cy.on("tap", "node", (evt) => guarded(() => openEntity(evt.target.data("label"))));
  window.inspectorCy = cy;
  const ms = performance.now() - started;
  window.inspectorTimes.graphRenderMs = ms;
  window.inspectorTimes.drawnNodes = nodes.length;
  window.inspectorTimes.drawnAt = performance.now();
  $("graph-caption").textContent = `${count(state.graph.entities.length, "entity", "entities")}, ${count(shownRelations().length, "relation", "relations")}` +
    (state.asOf ? ` as of ${short(state.asOf)}` : " now") + (state.knownAt ? `, as graphmem knew it at ${short(state.knownAt)}` : "") +
    (note ? `; ${note}` : "");
  renderLegend(nodes);
  document.body.dataset.graphDrawn = String(Date.now());
}

function renderLegend(nodes) {
  const types = [...new Set(nodes.map((n) => n.data.type))].sort();
  $("legend").replaceChildren(...types.map((type) => {
    const li = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.backgroundColor = colourOf(type);
    li.append(swatch, document.createTextNode(type));
    return li;
  }));
}

function drawnElements() {
  const relations = shownRelations();
  const byId = new Map(state.graph.entities.map((e) => [e.id, e]));
  let ids = new Set();
  for (const r of relations) { ids.add(r.source_id); ids.add(r.destination_id); }
  const self = state.graph.entities.find((e) => e.name === state.graph.self);
  if (self) ids.add(self.id);
  let note = "";
  let centre = null;
  if (ids.size > DRAW_LIMIT) {
    centre = pickCentre(relations, self);
    ids = neighbourhood(relations, centre.id);
    note = `drawing the neighbourhood of “${centre.name}” (${ids.size} of ${byId.size} entities; centre on another entity to move)`;
  }
  const nodes = [...ids].filter((id) => byId.has(id)).map((id) => nodeElement(byId.get(id), self));
  const edges = relations.filter((r) => ids.has(r.source_id) && ids.has(r.destination_id)).map(edgeElement);
  return { nodes, edges, note, centre: centre && centre.id };
}

function pickCentre(relations, self) {
  const wanted = state.focus && state.graph.entities.find((e) => e.name.toLowerCase() === state.focus.toLowerCase());
  return wanted || self || state.graph.entities[0];
}

function neighbourhood(relations, centreId) {
  const ids = new Set([centreId]);
  for (const r of relations) {
    if (ids.size >= DRAW_LIMIT) break;
    if (r.source_id === centreId) ids.add(r.destination_id);
    else if (r.destination_id === centreId) ids.add(r.source_id);
  }
  return ids;
}

function nodeElement(e, self) {
  return { data: { id: e.id, label: e.name, type: e.entity_type || "entity", colour: colourOf(e.entity_type), self: self && e.id === self.id ? 1 : 0 } };
}

function edgeElement(r) {
  return { data: { id: r.id, source: r.source_id, target: r.destination_id, label: r.relationship, retired: r.holds ? 0 : 1 } };
}

// Each entity type of the user's graph gets its own colour (in name order; a hash gave person and
// company the same one); past the palette's ten, colours repeat.
function colourOf(type) {
  const types = state.graph ? state.graph.types || (state.graph.types = [...new Set(state.graph.entities.map((e) => e.entity_type || "entity"))].sort()) : [];
  const at = types.indexOf(type || "entity");
  return PALETTE[(at < 0 ? 0 : at) % PALETTE.length];
}

function graphStyle() {
  return [
    { selector: "node", style: { label: "data(label)", "background-color": "data(colour)", "font-size": 10, width: 18, height: 18, color: "#1d2330" } },
    { selector: "node[self = 1]", style: { shape: "star", width: 30, height: 30, "border-width": 3, "border-color": "#000" } },
    { selector: "edge", style: { label: "data(label)", "font-size": 8, "curve-style": "bezier", "target-arrow-shape": "triangle", width: 1.5, "line-color": "#8a93a6", "target-arrow-color": "#8a93a6", color: "#5b6475",
      "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.85, "text-background-padding": 1 } },
    { selector: "edge[retired = 1]", style: { "line-style": "dashed", "line-color": "#c9ccd3", "target-arrow-color": "#c9ccd3" } },
  ];
}

function selfRoot() {
  const self = state.graph.entities.find((e) => e.name === state.graph.self);
  return self ? [self.id] : undefined;
}

function layoutFor(count, centre) {
  if (centre) return { name: "concentric", animate: false, minNodeSpacing: 12, concentric: (n) => (n.id() === centre ? 2 : 1), levelWidth: () => 1 };
  // a personal graph is mostly a tree around the user: laid out breadth first from the user's own node
  if (count <= 80) return { name: "breadthfirst", animate: false, directed: false, spacingFactor: 1.1, roots: selfRoot() };
  return { name: "concentric", animate: false, minNodeSpacing: 12, concentric: (n) => n.data("self") ? 10 : n.degree(), levelWidth: () => 2 };
}

// --- entity --------------------------------------------------------------------------------------

async function openEntity(name) {
  const data = await getJson("/ui/api/entity", { user_id: state.user, name });
  state.entity = data.entity;
  $("entity-title").textContent = `Entity “${data.entity}”`;
  const rows = data.relations.map((r) => {
    const tr = row([r.source, r.relationship, r.destination, short(r.valid_at), short(r.invalid_at), short(r.created_at), short(r.expired_at)]);
    tr.append(factAndProvenance(r));
    if (r.invalid_at || r.expired_at) tr.className = "retired";
    return tr;
  });
  $("timeline").tBodies[0].replaceChildren(...rows);
  resetWhy();
  $("entity-memories").replaceChildren(...data.memories.map((m) => { const li = document.createElement("li"); li.textContent = m.memory; return li; }));
  $("forget-entity").hidden = false;
  selectTab("entity");
}

async function forgetEntity() {
  const name = state.entity;
  const result = (await api("DELETE", "/ui/api/entity", { user_id: state.user, name })).json();
  status(`forgot “${name}”: ${result.entities} entities, ${result.memories} memories`);
  $("entity-title").textContent = `“${name}” was forgotten`;
  $("timeline").tBodies[0].replaceChildren();
  resetWhy();
  $("entity-memories").replaceChildren();
  $("forget-entity").hidden = true;
  state.entity = null;
  await Promise.all([listMemories(), loadGraph()]);
  drawGraph();
}

// --- export and forget the user ------------------------------------------------------------------

async function exportAs(format) {
  const response = await api("GET", "/ui/api/export", { user_id: state.user, format });
  const blob = new Blob([response.text], { type: format === "json" ? "application/json" : "application/graphml+xml" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `graphmem-${state.user}.${format}`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  status(`exported ${format} (${response.text.length} bytes)`);
}

async function forgetUser() {
  const user = state.user;
  await api("DELETE", "/ui/api/user", { user_id: user });
  await openUser(user, null);
  status(`forgot everything of ${user}`);
}

// --- small DOM helpers ---------------------------------------------------------------------------

function cell(text) { const td = document.createElement("td"); td.textContent = text ?? ""; return td; }
// a relation version's fact and the adds behind it, each add a button that shows what it brought
// (ids cut to 8 characters; the full id is the button's title)
function factAndProvenance(r) {
  const p = r.provenance || { added_by: [], retired_by: null };
  const td = document.createElement("td");
  if (r.fact) td.append(r.fact);
  const adds = [...p.added_by.map((id) => ["added by", id]), ...(p.retired_by ? [["retired by", p.retired_by]] : [])];
  adds.forEach(([what, id], i) => {
    td.append(i === 0 && r.fact ? " · " : i ? "; " : "", `${what} `);
    const b = button(id.slice(0, 8), `what add ${id} brought`, () => showWhy(id).catch(showError));
    b.title = id;
    b.className = "add-id";
    td.append(b);
  });
  return td;
}

function resetWhy() {
  const hint = document.createElement("p");
  hint.textContent = "Choose an add id in the timeline (added by / retired by) to see its messages, memory changes and relations.";
  $("entity-why").replaceChildren(hint);
}

async function showWhy(addId) {
  const why = await getJson("/ui/api/provenance", { user_id: state.user, add_id: addId });
  const box = $("entity-why");
  const line = (text) => { const li = document.createElement("li"); li.textContent = text; return li; };
  const triple = (r) => `${r.source} ${r.relationship} ${r.destination}`;
  const items = [
    ...why.messages.map((m) => line(`said (${m.role}, ${short(m.timestamp)}): “${m.content}”`)),
    ...why.memories.map((e) => line(`memory ${e.event}: ${e.old_memory ? `“${e.old_memory}” → ` : ""}“${e.new_memory ?? ""}”`)),
    ...why.relations.asserted.map((r) => line(`asserted: ${triple(r)}`)),
    ...why.relations.retired.map((r) => line(`retired: ${triple(r)}`)),
  ];
  if (!why.messages_kept) items.unshift(line("no message of this add is in the conversation log (it keeps the newest ones only)"));
  const title = document.createElement("p");
  title.textContent = `Add ${addId}`;
  const list = document.createElement("ul");
  list.append(...items);
  box.replaceChildren(title, list);
}

function row(values) { const tr = document.createElement("tr"); tr.append(...values.map(cell)); return tr; }
function option(value) { const o = document.createElement("option"); o.value = value; return o; }
function count(n, one, many) { return `${n} ${n === 1 ? one : many}`; }
function short(t) { return t ? t.replace("T", " ").replace(/(\.\d+)?(\+00:00|Z)$/, "") : ""; }
function span(from, to) { return `${short(from) || "…"} → ${short(to) || "now"}`; }

function button(text, label, onClick) {
  const b = document.createElement("button");
  b.type = "button"; b.textContent = text; b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

function entityCell(name) {
  const td = document.createElement("td");
  const b = button(name, `open entity ${name}`, () => guarded(() => openEntity(name)));
  b.className = "link";
  td.append(b);
  return td;
}

function confirmThen(text, action) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  dialog.returnValue = "";
  dialog.addEventListener("close", () => { if (dialog.returnValue === "ok") guarded(action); }, { once: true });
  dialog.showModal();
  $("confirm-cancel").focus();
}

// --- tabs ----------------------------------------------------------------------------------------

const TABS = ["memories", "graph", "entity", "corrections"];

function selectTab(name) {
  for (const t of TABS) {
    const on = t === name;
    $(`tab-${t}`).setAttribute("aria-selected", String(on));
    $(`tab-${t}`).tabIndex = on ? 0 : -1;
    $(`panel-${t}`).hidden = !on;
  }
  // a layout computed while the panel was hidden had no room: lay it out again now that it shows
  if (name === "graph" && state.graph && state.drawnHidden) drawGraph();
}

function tabKeys(evt) {
  const at = TABS.indexOf(evt.target.id.replace("tab-", ""));
  const step = { ArrowRight: 1, ArrowLeft: -1 }[evt.key];
  if (at < 0 || !step) return;
  const next = TABS[(at + step + TABS.length) % TABS.length];
  selectTab(next);
  $(`tab-${next}`).focus();
}

// --- wiring --------------------------------------------------------------------------------------

function wire() {
  $("open-form").addEventListener("submit", (e) => { e.preventDefault(); openUser($("user-id").value.trim(), null); });
  $("key-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY_SLOT, $("api-key").value);
    $("api-key").value = "";
    clearError();
    if (await startSession() && state.user) await openUser(state.user, state.asOf, state.knownAt);
  });
  $("forget-key").addEventListener("click", () => { sessionStorage.removeItem(KEY_SLOT); clearUser(); location.reload(); });
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); guarded(searchMemories); });
  $("list-all").addEventListener("click", () => { $("query").value = ""; guarded(listMemories); });
  $("show-retired-memories").addEventListener("change", () => guarded(searchMemories));
  $("as-of-slider").addEventListener("input", () => sliderMoved(false));
  $("as-of-slider").addEventListener("change", () => sliderMoved(true));
  $("as-of-go").addEventListener("click", () => setTimes($("as-of").value.trim() || null, $("known-at").value.trim() || null));
  $("as-of-now").addEventListener("click", () => setTimes(null, null));
  $("show-retired").addEventListener("change", () => { renderRelations(); drawGraph(); });
  $("relation-filter").addEventListener("input", renderRelations);
  $("focus-go").addEventListener("click", () => { state.focus = $("focus").value.trim() || null; drawGraph(); });
  $("forget-entity").addEventListener("click", () => confirmThen(
    `Forget “${state.entity}”? This erases the entity, its relations and every memory that mentions it.`, forgetEntity));
  $("export-json").addEventListener("click", () => guarded(() => exportAs("json")));
  $("export-graphml").addEventListener("click", () => guarded(() => exportAs("graphml")));
  $("forget-user").addEventListener("click", () => confirmThen(
    `Forget everything of user “${state.user}”? This cannot be undone.`, forgetUser));
  for (const t of TABS) {
    $(`tab-${t}`).addEventListener("click", () => selectTab(t));
    $(`tab-${t}`).addEventListener("keydown", tabKeys);
  }
}

async function boot() {
  wire();
  const params = new URLSearchParams(location.search);
  state.user = params.get("user_id");
  state.asOf = params.get("as_of");
  state.knownAt = params.get("known_at");
  if (state.user) $("user-id").value = state.user;
  if (await startSession() && state.user) await openUser(state.user, state.asOf, state.knownAt);
  document.body.dataset.ready = "1";
}

document.addEventListener("DOMContentLoaded", boot);
