/*
 * The operator console: the table as the engine believes it, the recent moves with their
 * warnings (each can be undone or replaced — by picking the right card among the camera's
 * candidates or by editing the move's fields), a form to insert a move the camera missed, the
 * feed's start/stop, the camera picture and reads still pending, player names, rule options and
 * a new game. Every write goes through the REST API with the access token; what is shown comes
 * back over the websocket, so the console never guesses the result of its own actions.
 * A move read by the camera offers the other cards its identifier considered as one-click
 * buttons (the evidence comes from the journal). "Calibrate" lets the operator click the four
 * table corners on the camera picture; the game's zones from `GET /api/calibration` are then
 * drawn over it.
 */

import {
  Live, actionsLeft, api, cardChip, el, groupCards, languageLinks, loadCatalog, loadI18n,
  moveText, playerName, readParams, rememberToken, t, tableGroups, usedTools, warningText,
  zoneCount, zoneLabel, zoneTop,
} from "/static/app.js";

const params = readParams("operator");
const CAMERA_REFRESH_MS = 1000;
const CAMERA_RETRY_MS = 5000;

let view = null;
let catalog = null;
let game = null; // GET /api/game
let live = null;
let gameKey = null;
let editor = null; // { seq, node } while a move is being replaced
const evidenceBySeq = new Map(); // journal evidence of the camera's moves, by seq
let journalSeen = 0; // newest journal seq whose evidence was fetched
let calibration = null; // GET /api/calibration
let corners = null; // clicked corners (camera-frame pixels) while calibrating, else null
const SVG_NS = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);

function showError(id, error) {
  const box = $(id);
  if (!error) {
    box.textContent = "";
    return;
  }
  const needsToken = error.status === 401 || error.status === 403;
  box.textContent = needsToken ? `${t("token_required")} (${error.message})` : String(error.message ?? error);
}

async function write(errorId, method, path, body) {
  showError(errorId, null);
  try {
    return await api(params, method, path, body);
  } catch (error) {
    showError(errorId, error);
    return undefined;
  }
}

// -- move fields: one input per field of the game's move spec --------------------------------

function valueText(value) {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.join(", ");
  if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${k}=${v}`).join(", ");
  return String(value);
}

function parseField(spec, raw) {
  const text = raw.trim();
  const type = spec.type ?? "str";
  if (text === "") {
    if (spec.required) throw new Error(`${spec.name}: required`);
    return undefined;
  }
  if (type.startsWith("int")) {
    const n = Number(text);
    if (!Number.isInteger(n)) throw new Error(`${spec.name}: a whole number, not "${text}"`);
    return n;
  }
  if (type.startsWith("list")) {
    const items = text.split(",").map((x) => x.trim()).filter(Boolean);
    return type.includes("int") ? items.map(Number) : items;
  }
  if (type.startsWith("map")) {
    if (text.startsWith("{")) return JSON.parse(text);
    const out = {};
    for (const pair of text.split(",")) {
      const [k, v] = pair.split("=").map((x) => x.trim());
      if (!k || !v) throw new Error(`${spec.name}: write zone=card, zone=card`);
      out[k] = v;
    }
    return out;
  }
  if (type === "bool") return ["1", "true", "yes", "on"].includes(text.toLowerCase());
  return text;
}

function isCardField(spec) {
  return ["card", "sword", "cards", "pay", "axes"].includes(spec.name);
}

/** Inputs for a move type's fields (the player is chosen apart), prefilled from `move`. */
function fieldsEditor(typeName, move = {}) {
  const spec = (game?.moves ?? []).find((m) => m.name === typeName);
  const specs = spec ? spec.fields.filter((f) => f.name !== "player")
    : Object.keys(move).filter((k) => k !== "player" && k !== "move")
      .map((name) => ({ name, type: Array.isArray(move[name]) ? "list[str]" : "str", required: false }));
  const inputs = new Map();
  const box = el("div", { class: "fields" });
  for (const f of specs) {
    const input = el("input", {
      name: f.name,
      value: valueText(move[f.name]),
      size: f.type.startsWith("list") || f.type === "map" ? 28 : 14,
      list: isCardField(f) ? "card-ids" : null,
      placeholder: f.type,
      title: f.type,
    });
    inputs.set(f.name, { spec: f, input });
    box.append(el("label", {}, el("span", { text: f.required ? `${f.name}*` : f.name }), input));
  }
  return {
    node: box,
    doc: spec?.doc ?? "",
    set(name, value) {
      const entry = inputs.get(name);
      if (entry) entry.input.value = valueText(value);
    },
    has(name) { return inputs.has(name); },
    read(player) {
      const out = { player: Number(player), move: typeName };
      for (const { spec: f, input } of inputs.values()) {
        const v = parseField(f, input.value);
        if (v !== undefined) out[f.name] = v;
      }
      return out;
    },
  };
}

function playerSelect(selected) {
  const select = el("select", {});
  const n = Number(game?.players ?? view?.players?.length ?? 0);
  for (let p = 1; p <= n; p += 1) {
    select.append(el("option", { value: p, selected: Number(selected) === p, text: `${p} — ${playerName(view, p)}` }));
  }
  return select;
}

function typeSelect(selected) {
  const select = el("select", {});
  for (const m of game?.moves ?? []) {
    select.append(el("option", { value: m.name, selected: m.name === selected, text: m.name }));
  }
  if (selected && ![...select.options].some((o) => o.value === selected)) {
    select.append(el("option", { value: selected, selected: true, text: selected }));
  }
  return select;
}

// -- insert move ------------------------------------------------------------------------------

let insertEditor = null;

function renderInsertForm() {
  const typeBox = $("insert-type");
  const chosen = typeBox.value || game?.moves?.[0]?.name;
  typeBox.replaceChildren(...typeSelect(chosen).children);
  if (chosen) typeBox.value = chosen;
  const playerBox = $("insert-player");
  const chosenPlayer = playerBox.value || view?.current || 1;
  playerBox.replaceChildren(...playerSelect(chosenPlayer).children);
  playerBox.value = String(chosenPlayer);
  insertEditor = fieldsEditor(typeBox.value);
  $("insert-fields").replaceChildren(insertEditor.node,
    insertEditor.doc ? el("div", { class: "hint", text: insertEditor.doc }) : null);
}

async function insertMove(event) {
  event.preventDefault();
  let move;
  try {
    move = insertEditor.read($("insert-player").value);
  } catch (error) {
    showError("insert-error", error);
    return;
  }
  const result = await write("insert-error", "POST", "/api/moves", { move });
  if (result !== undefined) renderInsertForm();
}

// -- replace: candidates and fields -------------------------------------------------------------

function candidatesOf(evidence) {
  const found = [];
  const visit = (value, field) => {
    if (!value || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const c of value) {
        if (typeof c === "string") found.push({ card: c, score: null, field });
        else if (c && typeof c === "object" && (c.card || c.id || c.face)) {
          found.push({ card: c.card ?? c.id ?? c.face, score: c.score ?? null, field: c.field ?? field });
        }
      }
      return;
    }
    for (const [k, v] of Object.entries(value)) {
      if (k === "candidates") visit(v, field);
      else if (v && typeof v === "object" && !Array.isArray(v) && "candidates" in v) visit(v.candidates, k);
    }
  };
  visit(evidence ?? {}, null);
  const seen = new Set();
  return found.filter((c) => (seen.has(c.card) ? false : (seen.add(c.card), true)));
}

async function journalEntry(seq) {
  try {
    const data = await api(params, "GET", `/api/journal?since=${Math.max(0, seq - 1)}`);
    const entries = Array.isArray(data) ? data : data?.entries ?? [];
    return entries.find((e) => Number(e.seq) === Number(seq)) ?? null;
  } catch (_) {
    return null;
  }
}

async function openReplace(entry) {
  if (editor?.seq === entry.seq) {
    closeReplace();
    return;
  }
  const move = entry.move ?? {};
  const node = el("div", { class: "editor", dataset: { seq: entry.seq } });
  editor = { seq: entry.seq, node };
  const players = playerSelect(move.player ?? entry.player);
  const types = typeSelect(move.move);
  let fields = fieldsEditor(types.value, move);
  const fieldBox = el("div", {}, fields.node);
  types.addEventListener("change", () => {
    fields = fieldsEditor(types.value, types.value === move.move ? move : {});
    fieldBox.replaceChildren(fields.node);
  });
  const candidates = el("div", { class: "candidates" });
  const error = el("div", { class: "error" });
  const save = async (evt) => {
    evt?.preventDefault();
    error.textContent = "";
    let newMove;
    try {
      newMove = fields.read(players.value);
    } catch (e) {
      error.textContent = e.message;
      return;
    }
    try {
      await api(params, "PUT", `/api/moves/${entry.seq}`, { move: newMove });
      closeReplace();
    } catch (e) {
      error.textContent = e.status === 401 || e.status === 403 ? t("token_required") : e.message;
    }
  };
  node.append(
    el("div", {}, el("strong", { text: `${t("replace")} #${entry.seq}` })),
    candidates,
    el("label", {}, el("span", { text: t("player") }), players),
    el("label", {}, el("span", { text: t("moves") }), types),
    fieldBox,
    el("button", { type: "button", class: "primary", onclick: save, text: t("save") }),
    " ",
    el("button", { type: "button", onclick: closeReplace, text: t("cancel") }),
    error);
  renderMoves();
  const journal = await journalEntry(entry.seq);
  // The camera's runner-up faces (the vision feed's evidence) fill the field that names the card.
  for (const group of candidateGroups(journal?.evidence ?? evidenceBySeq.get(Number(entry.seq)))) {
    const at = locate(move, group);
    if (!at) continue;
    for (const c of group.list.filter((x) => x.card !== at.card)) {
      candidates.append(el("button", {
        type: "button",
        class: "candidate",
        dataset: { card: c.card },
        onclick: () => fields.set(at.field, withCard(move, at, c.card)[at.field]),
      }, cardChip(catalog, c.card), c.score === null ? "" : ` ${(c.score * 100).toFixed(0)}%`));
    }
  }
  for (const c of candidatesOf(journal?.evidence ?? entry.evidence)) {
    const target = c.field && fields.has(c.field) ? c.field : "card";
    const label = c.score === null ? "" : ` ${(Number(c.score) * 100).toFixed(0)}%`;
    candidates.append(el("button", {
      type: "button",
      class: "candidate",
      dataset: { card: c.card },
      onclick: () => fields.set(target, c.card),
    }, cardChip(catalog, c.card), label));
  }
}

function closeReplace() {
  editor = null;
  renderMoves();
}

// -- one-click picks among the camera's candidates --------------------------------------------------

/** The catalog card a face id shows (`diamond-sword/tool` → `diamond-sword`); null for a back. */
function faceCard(face) {
  if (face === null || face === undefined || !catalog) return null;
  const text = String(face);
  if (catalog.card(text)) return text;
  for (const [id, card] of catalog.cards) {
    if (card.front === text) return id;
  }
  const base = text.split("/")[0];
  return catalog.card(base) ? base : null;
}

/**
 * Groups of alternatives from a camera move's evidence: per card read in a zone (the vision
 * feed's `zones: {zone: [[[face, score], …] per card, top first]}`), the distinct catalog cards
 * among its face candidates, best first; only cards with a real alternative.
 */
function candidateGroups(evidence) {
  const groups = [];
  const zones = evidence?.zones;
  if (!zones || typeof zones !== "object") return groups;
  for (const [zone, cards] of Object.entries(zones)) {
    if (!Array.isArray(cards)) continue;
    cards.forEach((candidates, index) => {
      const list = [];
      const seen = new Set();
      for (const c of Array.isArray(candidates) ? candidates : []) {
        const [face, score] = Array.isArray(c) ? c : [c?.face ?? c?.card, c?.score];
        const card = faceCard(face);
        if (card && !seen.has(card)) {
          seen.add(card);
          list.push({ card, score: score === undefined || score === null ? null : Number(score) });
        }
      }
      if (list.length >= 2) groups.push({ zone, index, list });
    });
  }
  return groups;
}

/** Where the move names one of a group's cards: a revealed pile top, a card field or a list item. */
function locate(move, group) {
  const cards = new Set(group.list.map((c) => c.card));
  const reveal = move.reveal;
  if (reveal && typeof reveal === "object" && !Array.isArray(reveal) && cards.has(reveal[group.zone])) {
    return { field: "reveal", key: group.zone, card: reveal[group.zone] };
  }
  for (const field of ["card", "sword"]) {
    if (cards.has(move[field])) return { field, card: move[field] };
  }
  for (const field of ["pay", "cards", "axes"]) {
    if (!Array.isArray(move[field])) continue;
    const i = move[field].findIndex((c) => cards.has(c));
    if (i >= 0) return { field, index: i, card: move[field][i] };
  }
  return null;
}

function withCard(move, at, card) {
  const out = JSON.parse(JSON.stringify(move));
  if (at.field === "reveal") out.reveal[at.key] = card;
  else if (at.index !== undefined) out[at.field][at.index] = card;
  else out[at.field] = card;
  return out;
}

/** The pick buttons of one move row: the card in the move is marked, any other replaces it. */
function pickButtons(m) {
  const evidence = evidenceBySeq.get(Number(m.seq));
  if (!evidence || !m.move) return null;
  const rows = [];
  for (const group of candidateGroups(evidence)) {
    const at = locate(m.move, group);
    if (!at) continue;
    const buttons = group.list.map((c) => {
      const chosen = c.card === at.card;
      return el("button", {
        type: "button",
        class: `pick${chosen ? " chosen" : ""}`,
        dataset: { card: c.card, zone: group.zone },
        title: t("pick_card"),
        "aria-pressed": chosen ? "true" : "false",
        onclick: chosen ? null : () => pickCard(m, at, c.card),
      }, cardChip(catalog, c.card), c.score === null ? "" : ` ${(c.score * 100).toFixed(0)}%`);
    });
    rows.push(el("div", { class: "picks", dataset: { zone: group.zone } },
      el("span", { class: "hint", text: `${t("pick_card")} (${zoneLabel(group.zone)}):` }), buttons));
  }
  return rows.length ? rows : null;
}

async function pickCard(m, at, card) {
  await write("moves-error", "PUT", `/api/moves/${m.seq}`, { move: withCard(m.move, at, card) });
}

/** Fetch the evidence of journal entries newer than those already seen (operator data). */
async function refreshEvidence() {
  if (!view || Number(view.seq) <= journalSeen) return;
  const since = journalSeen;
  journalSeen = Number(view.seq);
  let data;
  try {
    data = await api(params, "GET", `/api/journal?since=${since}`);
  } catch (_) {
    journalSeen = since; // no token yet, or the server is away: try again with the next state
    return;
  }
  let found = false;
  for (const e of data?.entries ?? []) {
    if (e.kind === "move" && e.evidence && Object.keys(e.evidence).length) {
      evidenceBySeq.set(Number(e.seq), e.evidence);
      found = true;
    }
  }
  if (found) renderMoves();
}

// -- rendering the live view ---------------------------------------------------------------------

function renderHeader() {
  $("game-name").textContent = view.game_name || view.game;
  const feed = view.status?.feed ?? "stopped";
  const badge = $("feed");
  badge.textContent = `${t(feed === "running" ? "feed_running" : "feed_stopped")}`
    + (view.status?.feed_name ? ` (${view.status.feed_name})` : "");
  badge.className = `badge ${feed === "running" ? "ok" : ""}`;
  badge.dataset.feed = feed;
}

function renderState() {
  if (view.over) {
    $("turn").textContent = t("game_over");
  } else {
    $("turn").replaceChildren(
      el("span", { text: t("turn_n", { n: view.turn ?? "" }) }), " • ",
      el("span", { text: `${t("current_player")}: ${playerName(view, view.current)}` }),
      ...(typeof view.allowed === "number"
        ? [" • ", el("span", { text: t("actions_left", { n: actionsLeft(view) }) })] : []));
  }
  const winner = $("winner");
  winner.hidden = view.winner === null || view.winner === undefined;
  winner.textContent = winner.hidden ? "" : t("winner_is", { player: playerName(view, view.winner) });
  const used = usedTools(view);
  $("state-players").replaceChildren(...(view.players ?? []).map((p) => {
    const chips = [];
    for (const [zone, cards] of Object.entries(p.zones ?? {})) {
      for (const [id, n] of groupCards(catalog, cards ?? [])) {
        const chip = cardChip(catalog, id, { count: n, used: used.has(id) });
        if (zone.startsWith("reserve")) chip.title = `${t("reserve")}: ${chip.title}`;
        chips.push(chip);
      }
    }
    const current = !view.over && Number(view.current) === Number(p.n);
    return el("div", { class: `cplayer${current ? " current" : ""}`, dataset: { player: p.n } },
      el("div", { class: "head" },
        el("span", { text: `${p.n}. ${p.name || playerName(view, p.n)}` }),
        el("span", { class: "score", text: `${p.score ?? 0}${view.target ? ` / ${view.target}` : ""}` })),
      el("div", { class: "chips" }, chips));
  }));
  const piles = [];
  for (const g of tableGroups(view)) {
    for (const z of g.zones) {
      const count = zoneCount(view, z.id);
      const label = g.numbered ? `${zoneLabel(g.id)} ${z.number}` : zoneLabel(z.id);
      piles.push(el("div", { class: "cpile", dataset: { zone: z.id } },
        el("span", { text: `${label} (${count})` }),
        count ? cardChip(catalog, zoneTop(view, z.id)) : el("span", { text: t("empty") })));
    }
  }
  $("state-table").replaceChildren(...piles);
}

function renderMoves() {
  if (!view) return;
  const bySeq = new Map();
  for (const w of view.warnings ?? []) {
    if (!bySeq.has(w.seq)) bySeq.set(w.seq, []);
    bySeq.get(w.seq).push(w);
  }
  const rows = [];
  const moves = [...(view.moves ?? [])].reverse();
  if (!moves.length) rows.push(el("tr", {}, el("td", { text: t("no_moves") })));
  let editorShown = false;
  for (const m of moves) {
    const warnings = bySeq.get(m.seq) ?? [];
    const source = m.source ? t(`source_${m.source}`, {}, m.source) : "";
    rows.push(el("tr", { class: warnings.length ? "warned" : null, dataset: { seq: m.seq } },
      el("td", { class: "seq", text: String(m.seq) }),
      el("td", {},
        moveText(view, catalog, m),
        m.replaced ? el("em", { class: "replaced", title: t("replace"), text: " ✎" }) : null,
        warnings.map((w) => el("span", { class: "wtext", dataset: { code: w.code }, text: `⚠ ${warningText(view, w)}` })),
        pickButtons(m)),
      el("td", { class: "source", text: source }),
      el("td", { class: "actions" },
        el("button", { type: "button", class: "undo", onclick: () => undoMove(m.seq), text: t("undo") }),
        " ",
        el("button", { type: "button", class: "replace", onclick: () => openReplace(m), text: t("replace") }))));
    if (editor?.seq === m.seq) {
      rows.push(el("tr", { class: "editor-row" }, el("td", { colspan: 4 }, editor.node)));
      editorShown = true;
    }
  }
  if (editor && !editorShown) editor = null; // the move was undone meanwhile
  $("moves").replaceChildren(...rows);
}

async function undoMove(seq) {
  await write("moves-error", "POST", `/api/moves/${seq}/undo`);
}

function renderWarnings() {
  const list = [...(view.warnings ?? [])].reverse();
  $("warnings").replaceChildren(...(list.length
    ? list.map((w) => el("li", { dataset: { code: w.code, seq: w.seq } },
      `#${w.seq} ${warningText(view, w)}`))
    : [el("li", { class: "none", text: t("no_warnings") })]));
}

function renderStatus() {
  const s = view.status ?? {};
  const bits = [];
  if (s.camera === "lost") bits.push(t("camera_lost"));
  else if (s.camera === "ok") bits.push(t("camera_ok"));
  if (s.fps !== null && s.fps !== undefined) bits.push(`${t("fps")}: ${s.fps}`);
  if (s.message) bits.push(s.message);
  if (view.delay_s) bits.push(t("delay_s", { s: view.delay_s }));
  $("status-text").textContent = bits.join(" • ");
  const pending = s.pending ?? [];
  $("pending").replaceChildren(...(pending.length ? pending.map((p) => {
    const cands = candidatesOf(p);
    return el("li", {},
      el("strong", { text: p.zone ? zoneLabel(String(p.zone)) : t("pending") }), " ",
      cands.length
        ? cands.map((c) => el("span", {}, cardChip(catalog, c.card),
          c.score === null ? " " : ` ${(Number(c.score) * 100).toFixed(0)}% `))
        : el("span", { text: p.message ?? JSON.stringify(p) }));
  }) : [el("li", { class: "none", text: "—" })]));
}

// -- game, names, options -------------------------------------------------------------------------

async function refreshGame() {
  try {
    game = await api(params, "GET", "/api/game");
  } catch (_) {
    return;
  }
  renderGameForms();
  renderInsertForm();
}

function renderGameForms() {
  const names = game.names ?? [];
  const nameInputs = [];
  for (let p = 1; p <= Number(game.players ?? 0); p += 1) {
    nameInputs.push(el("label", {}, el("span", { text: t("player_n", { n: p }) }),
      el("input", { name: `name-${p}`, value: names[p - 1] ?? "", size: 12, maxlength: 40 })));
  }
  $("names-fields").replaceChildren(...nameInputs);
  $("options-fields").replaceChildren(...(game.options ?? []).map((o) => {
    let input;
    if (o.choices?.length) {
      input = el("select", { name: o.name, title: o.help ?? "" },
        o.choices.map((c) => el("option", {
          value: String(c),
          selected: String(c) === String(o.value),
          text: String(c) === String(o.default) ? `${c} (${t("option_default")})` : String(c),
        })));
    } else {
      input = el("input", { name: o.name, value: o.value ?? "", title: o.help ?? "" });
    }
    return el("label", { title: o.help ?? "" }, el("span", { text: o.name }), input);
  }));
  $("new-game-id").value = game.game ?? "";
  $("new-game-players").value = String(game.players ?? "");
  if (game.min_players) $("new-game-players").min = String(game.min_players);
  if (game.max_players) $("new-game-players").max = String(game.max_players);
  const ids = catalog ? [...catalog.cards.keys()] : [];
  $("card-ids").replaceChildren(...ids.map((id) => el("option", { value: id, text: catalog.name(id) })));
}

function optionValue(spec, text) {
  const match = (spec.choices ?? []).find((c) => String(c) === text);
  if (match !== undefined) return match;
  if (typeof spec.default === "number" && text.trim() !== "" && !Number.isNaN(Number(text))) return Number(text);
  if (typeof spec.default === "boolean") return text === "true";
  return text;
}

async function saveNames(event) {
  event.preventDefault();
  const names = [...$("names-fields").querySelectorAll("input")].map((i) => i.value.trim());
  if (await write("names-error", "PUT", "/api/game/names", { names }) !== undefined) refreshGame();
}

async function saveOptions(event) {
  event.preventDefault();
  const options = {};
  for (const spec of game?.options ?? []) {
    const input = $("options-fields").querySelector(`[name="${CSS.escape(spec.name)}"]`);
    if (input) options[spec.name] = optionValue(spec, input.value);
  }
  if (await write("options-error", "PUT", "/api/game/options", { options }) !== undefined) refreshGame();
}

let newGameArmed = null;

async function newGame(event) {
  event.preventDefault();
  const button = $("new-game-form").querySelector("button");
  if (!newGameArmed) {
    // Two clicks: the first one asks, so a stray click never ends the game at the table.
    button.textContent = t("confirm_new_game");
    newGameArmed = window.setTimeout(() => {
      newGameArmed = null;
      button.textContent = t("new_game");
    }, 5000);
    return;
  }
  window.clearTimeout(newGameArmed);
  newGameArmed = null;
  button.textContent = t("new_game");
  const body = {
    game: $("new-game-id").value.trim() || game?.game,
    players: Number($("new-game-players").value) || game?.players,
  };
  if (body.game === game?.game) body.names = game?.names ?? [];
  if (await write("new-game-error", "POST", "/api/game/new", body) !== undefined) refreshGame();
}

// -- camera and calibration --------------------------------------------------------------------------

const CORNERS = ["top-left", "top-right", "bottom-right", "bottom-left"];

function withToken(path) {
  return params.token ? `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(params.token)}` : path;
}

function startCamera() {
  const img = $("camera-img");
  const none = $("camera-none");
  let timer = null;
  const load = () => { img.src = withToken(`/api/camera.jpg?t=${Date.now()}`); };
  img.addEventListener("load", () => {
    const first = img.hidden;
    img.hidden = false;
    none.hidden = true;
    $("camera-frame").classList.add("shown");
    $("calib-start").disabled = false;
    if (first) refreshCalibration(); // the camera frame's size comes with it
    window.clearTimeout(timer);
    timer = window.setTimeout(load, CAMERA_REFRESH_MS);
  });
  img.addEventListener("error", () => {
    // No camera yet (404) or it went away: show the placeholder and look again later.
    img.hidden = true;
    none.hidden = false;
    $("camera-frame").classList.remove("shown");
    if (!corners) $("calib-start").disabled = true;
    window.clearTimeout(timer);
    timer = window.setTimeout(load, CAMERA_RETRY_MS);
  });
  load();
}

/** The camera frame's size in pixels: the feed's (the picture may be scaled down), else the picture's. */
function cameraSize() {
  const size = calibration?.camera_size;
  if (Array.isArray(size) && size[0] > 0 && size[1] > 0) return size;
  const img = $("camera-img");
  return img.naturalWidth ? [img.naturalWidth, img.naturalHeight] : null;
}

async function refreshCalibration() {
  try {
    calibration = await api(params, "GET", "/api/calibration");
  } catch (_) {
    calibration = null;
  }
  renderCalibrationInfo();
  drawOverlay();
}

function renderCalibrationInfo() {
  const info = $("calib-info");
  if (!calibration?.calibrated) {
    info.textContent = t("calib_none");
    info.dataset.calibrated = "false";
    return;
  }
  const p = calibration.profile;
  const error = calibration.fit_error;
  const bits = [
    t(`calib_source.${calibration.source}`, {}, calibration.source),
    t("calib_table", { w: Math.round(p.table_mm[0]), h: Math.round(p.table_mm[1]) }),
  ];
  if (error) bits.push(t("calib_fit", { mm: Number(error.max_mm).toFixed(1), px: Number(error.max_px).toFixed(1) }));
  if (p.created) bits.push(p.created.replace("T", " ").replace("+00:00", " UTC"));
  if (calibration.layout_error) bits.push(calibration.layout_error);
  info.textContent = bits.join(" • ");
  info.dataset.calibrated = "true";
}

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

function pointsAttr(points) {
  return points.map(([x, y]) => `${x},${y}`).join(" ");
}

/** Zones (from the calibration) and, while calibrating, the clicked corners, over the picture. */
function drawOverlay() {
  const overlay = $("camera-overlay");
  const size = cameraSize();
  overlay.replaceChildren();
  if (!size || $("camera-img").hidden) return;
  const [w, h] = size;
  overlay.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const unit = Math.max(w, h) / 400; // about one screen pixel at the usual picture size
  const layout = calibration?.layout;
  if (!corners && $("show-zones").checked && calibration?.calibrated && layout) {
    if (layout.table_px) {
      overlay.append(svg("polygon", { class: "table-outline", points: pointsAttr(layout.table_px), "stroke-width": unit }));
    }
    for (const zone of layout.zones) {
      if (!zone.polygon_px) continue;
      overlay.append(svg("polygon", {
        class: `zone kind-${zone.kind}`, "data-zone": zone.id, points: pointsAttr(zone.polygon_px), "stroke-width": unit,
      }));
      const xs = zone.polygon_px.map((q) => q[0]);
      const ys = zone.polygon_px.map((q) => q[1]);
      overlay.append(svg("text", {
        class: "zone-label", x: Math.min(...xs) + unit * 1.5, y: Math.min(...ys) + unit * 5.5, "font-size": unit * 4.5,
      }, zoneLabel(zone.id)));
    }
  }
  if (corners) {
    if (corners.length > 1) {
      overlay.append(svg(corners.length === 4 ? "polygon" : "polyline", {
        class: "corner-path", points: pointsAttr(corners), "stroke-width": unit,
      }));
    }
    corners.forEach(([x, y], i) => {
      overlay.append(svg("circle", { class: "corner-point", cx: x, cy: y, r: unit * 5, "data-corner": CORNERS[i] }));
      overlay.append(svg("text", { class: "corner-number", x: x + unit * 7, y: y - unit * 6, "font-size": unit * 12 }, String(i + 1)));
    });
  }
}

function renderCalibrationSteps() {
  const next = corners && corners.length < 4 ? CORNERS[corners.length] : null;
  for (const li of $("calib-steps").querySelectorAll("li")) {
    const i = CORNERS.indexOf(li.dataset.corner);
    li.classList.toggle("done", corners !== null && i < corners.length);
    li.classList.toggle("current", li.dataset.corner === next);
  }
  $("calib-next").textContent = !corners ? "" : next
    ? t("calib_click", { corner: t(`corner.${next}`) })
    : t("calib_ready");
  $("camera-frame").dataset.corner = next ?? "";
  $("calib-confirm").disabled = !corners || corners.length !== 4;
  drawOverlay();
}

function startCalibrating() {
  corners = [];
  showError("calib-error", null);
  const table = calibration?.profile?.table_mm ?? calibration?.layout?.table_mm;
  if (table) {
    $("calib-w").value = String(Math.round(table[0]));
    $("calib-h").value = String(Math.round(table[1]));
  }
  $("calib-panel").hidden = false;
  $("camera-frame").classList.add("calibrating");
  renderCalibrationSteps();
}

function stopCalibrating() {
  corners = null;
  $("calib-panel").hidden = true;
  $("camera-frame").classList.remove("calibrating");
  renderCalibrationSteps();
}

function clickCorner(event) {
  if (!corners || corners.length >= 4) return;
  const size = cameraSize();
  const box = $("camera-img").getBoundingClientRect();
  if (!size || !box.width || !box.height) return;
  const x = ((event.clientX - box.left) / box.width) * size[0];
  const y = ((event.clientY - box.top) / box.height) * size[1];
  corners.push([Math.round(x * 10) / 10, Math.round(y * 10) / 10]);
  renderCalibrationSteps();
}

async function confirmCalibration() {
  if (!corners || corners.length !== 4) return;
  const body = { corners, image_size: cameraSize() };
  const w = Number($("calib-w").value);
  const h = Number($("calib-h").value);
  if (w > 0 && h > 0) body.table_mm = [w, h];
  const result = await write("calib-error", "POST", "/api/calibration/corners", body);
  if (result === undefined) return;
  stopCalibrating();
  await refreshCalibration();
}

// -- wiring ------------------------------------------------------------------------------------------

async function onState(next) {
  catalog = await loadCatalog(next.game);
  const key = `${next.game}:${next.game_no ?? ""}:${(next.players ?? []).length}`;
  view = next;
  if (key !== gameKey) {
    gameKey = key;
    evidenceBySeq.clear();
    journalSeen = 0;
    await refreshGame();
    refreshCalibration();
  }
  renderHeader();
  renderState();
  renderMoves();
  renderWarnings();
  renderStatus();
  document.body.dataset.seq = String(view.seq ?? "");
  refreshEvidence();
}

async function main() {
  const { lang } = await loadI18n(params.lang);
  $("langs").replaceChildren(languageLinks(lang));
  $("token").value = params.token ?? "";
  $("token").addEventListener("change", () => {
    rememberToken(params, $("token").value.trim());
    live.token = params.token;
    live.reconnect();
  });
  $("feed-start").addEventListener("click", () => write("moves-error", "POST", "/api/feed/start"));
  $("feed-stop").addEventListener("click", () => write("moves-error", "POST", "/api/feed/stop"));
  $("insert-type").addEventListener("change", () => {
    insertEditor = fieldsEditor($("insert-type").value);
    $("insert-fields").replaceChildren(insertEditor.node,
      insertEditor.doc ? el("div", { class: "hint", text: insertEditor.doc }) : null);
  });
  $("insert-form").addEventListener("submit", insertMove);
  $("names-form").addEventListener("submit", saveNames);
  $("options-form").addEventListener("submit", saveOptions);
  $("new-game-form").addEventListener("submit", newGame);
  $("calib-start").disabled = true;
  $("calib-start").addEventListener("click", startCalibrating);
  $("calib-redo").addEventListener("click", () => { corners = []; renderCalibrationSteps(); });
  $("calib-cancel").addEventListener("click", stopCalibrating);
  $("calib-confirm").addEventListener("click", confirmCalibration);
  $("camera-frame").addEventListener("click", clickCorner);
  $("show-zones").addEventListener("change", drawOverlay);
  window.addEventListener("resize", drawOverlay);
  startCamera();
  const link = $("link");
  live = new Live({
    audience: params.audience === "public" || params.audience === "player" ? params.audience : "operator",
    player: params.player,
    token: params.token,
    onState,
    onConnection(up) {
      link.textContent = t(up ? "connected" : "disconnected");
      link.className = `badge ${up ? "ok" : "bad"}`;
    },
  }).start();
  window.cardtrack = live;
  link.textContent = t("disconnected");
  link.className = "badge bad";
}

main();
