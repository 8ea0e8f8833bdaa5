/*
 * cardtrack pages, shared client: reads the page's query parameters, loads the translations
 * and the game's catalog, talks to the REST API (sending the access token), and keeps one
 * live view model in a store fed by the websocket. The socket reconnects with a growing delay
 * and asks for the journal entries it missed (`since=`); every `state` message replaces the
 * whole view, so a reloaded or reconnected page always rebuilds everything it shows.
 */

const LANGUAGES = ["en", "fr", "fa", "pl", "nl"];
const TOKEN_KEY = "cardtrack.token";

/** The page's query parameters: audience, player, lang and token. */
export function readParams(defaultAudience = "public") {
  const q = new URLSearchParams(window.location.search);
  const audience = q.get("audience") || defaultAudience;
  const playerText = q.get("player");
  const player = playerText !== null && playerText !== "" ? Number(playerText) : null;
  const lang = q.get("lang");
  let token = q.get("token");
  if (token) {
    try { window.sessionStorage.setItem(TOKEN_KEY, token); } catch (_) { /* private mode */ }
  } else {
    try { token = window.sessionStorage.getItem(TOKEN_KEY); } catch (_) { token = null; }
  }
  return {
    audience,
    player: Number.isFinite(player) ? player : null,
    lang: lang && LANGUAGES.includes(lang) ? lang : null,
    token: token || null,
  };
}

/** Remember a token typed into the console for the rest of this browser session. */
export function rememberToken(params, token) {
  params.token = token || null;
  try {
    if (token) window.sessionStorage.setItem(TOKEN_KEY, token);
    else window.sessionStorage.removeItem(TOKEN_KEY);
  } catch (_) { /* private mode: the token lives only in memory */ }
}

// -- translations ---------------------------------------------------------------------------

let strings = {};
let english = {};
let isolate = false; // right-to-left: wrap filled-in values in bidi isolates (FSI … PDI)

function format(template, vars) {
  return template.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!vars || vars[name] === undefined || vars[name] === null) return whole;
    return isolate ? `\u2068${vars[name]}\u2069` : String(vars[name]);
  });
}

/** Translate `key`, filling `{name}` placeholders from `vars`; `fallback` when no language has it. */
export function t(key, vars = {}, fallback = undefined) {
  const template = strings[key] ?? english[key] ?? fallback ?? key;
  return format(template, vars);
}

/** Whether the loaded language (or English) has a string for `key`. */
export function hasText(key) {
  return key in strings || key in english;
}

async function fetchJson(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

/** The server's default language, from `GET /api/game` (`language`), else English. */
async function serverLanguage() {
  try {
    const game = await fetchJson("/api/game");
    if (game && LANGUAGES.includes(game.language)) return game.language;
  } catch (_) { /* the page still works in English */ }
  return "en";
}

/**
 * Load the translations for `lang` (or the server's default) with English beneath for any key
 * a language lacks; set `lang` and `dir` on <html> (Persian is right-to-left).
 */
export async function loadI18n(lang) {
  const chosen = lang || (await serverLanguage());
  try { english = await fetchJson("/api/i18n/en"); } catch (_) { english = {}; }
  strings = english;
  if (chosen !== "en") {
    try { strings = await fetchJson(`/api/i18n/${chosen}`); } catch (_) { strings = english; }
  }
  const dir = strings.dir === "rtl" ? "rtl" : "ltr";
  isolate = dir === "rtl";
  document.documentElement.lang = chosen;
  document.documentElement.dir = dir;
  for (const el of document.querySelectorAll("[data-i18n]")) {
    el.textContent = t(el.dataset.i18n);
  }
  for (const el of document.querySelectorAll("[data-i18n-title]")) {
    el.title = t(el.dataset.i18nTitle);
  }
  return { lang: chosen, dir };
}

// -- catalog: card names and kinds ----------------------------------------------------------

const catalogs = new Map();

class Catalog {
  constructor(data) {
    this.game = data?.game ?? "";
    this.title = data?.name ?? "";
    const raw = data?.cards ?? [];
    const list = Array.isArray(raw) ? raw : Object.entries(raw).map(([id, c]) => ({ id, ...c }));
    this.cards = new Map(list.map((c) => [c.id, c]));
  }

  card(id) { return this.cards.get(id) ?? null; }

  /** The card's display name: the language's (`card.<game>/<id>`) when it has one, else the catalog's. */
  name(id) {
    if (id === null || id === undefined) return t("face_down");
    const key = `card.${this.game}/${id}`;
    if (key in strings) return strings[key];
    return this.card(id)?.name ?? id;
  }

  kind(id) { return id === null || id === undefined ? "hidden" : this.card(id)?.kind ?? "unknown"; }

  /** The finer family used for colour: a resource's type, a craft card's material. */
  family(id) {
    const attrs = this.card(id)?.attrs ?? {};
    return attrs.resource ?? attrs.material ?? attrs.type ?? "";
  }

  /** The icon for a card: its tool, its resource type, or its kind. */
  icon(id) {
    if (id === null || id === undefined) return "back";
    const attrs = this.card(id)?.attrs ?? {};
    return attrs.tool ?? attrs.resource ?? this.kind(id);
  }

  points(id) {
    const p = this.card(id)?.attrs?.points;
    return typeof p === "number" ? p : null;
  }
}

/** The catalog of `game` from `GET /api/catalog/{game}` (cached; an empty one if it fails). */
export async function loadCatalog(game) {
  if (!game) return new Catalog(null);
  if (!catalogs.has(game)) {
    const pending = fetchJson(`/api/catalog/${encodeURIComponent(game)}`)
      .then((data) => new Catalog(data))
      .catch(() => new Catalog(null));
    catalogs.set(game, pending);
  }
  return catalogs.get(game);
}

// -- REST --------------------------------------------------------------------------------------

/** A failed request: the server's message (FastAPI `detail`) in plain words. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function detailText(detail) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => {
      const where = Array.isArray(d.loc) ? d.loc.filter((x) => x !== "body").join(".") : "";
      return where ? `${where}: ${d.msg}` : d.msg ?? JSON.stringify(d);
    }).join("; ");
  }
  return detail ? JSON.stringify(detail) : "";
}

/** Call the API; writing calls carry the token (as a bearer header and as `?token=`). */
export async function api(params, method, path, body = undefined) {
  const headers = { Accept: "application/json" };
  let url = path;
  if (params.token) {
    headers.Authorization = `Bearer ${params.token}`;
    headers["X-Token"] = params.token;
    url += (url.includes("?") ? "&" : "?") + `token=${encodeURIComponent(params.token)}`;
  }
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
  if (!response.ok) {
    const message = detailText(data?.detail ?? data?.message ?? data) || `HTTP ${response.status}`;
    throw new ApiError(response.status, message);
  }
  return data;
}

// -- the live view ------------------------------------------------------------------------------

/**
 * One websocket subscription. `onState(view)` gets every full view model; `onEvent(event, seq)`
 * gets journal events newer than what this page had already seen (the history present when the
 * page first loaded is not replayed as events); `onConnection(bool)` reports the link.
 */
export class Live {
  constructor({ audience, player = null, token = null, onState, onEvent, onConnection }) {
    this.audience = audience;
    this.player = player;
    this.token = token;
    this.onState = onState ?? (() => {});
    this.onEvent = onEvent ?? (() => {});
    this.onConnection = onConnection ?? (() => {});
    this.view = null;
    this.gameNo = undefined; // the view's game_no: a new game restarts the journal's seq
    this.seq = null; // the newest seq this page has processed
    this.baseline = null; // events at or below this seq are history, not news
    this.seenEvents = new Set();
    this.retryMs = 500;
    this.socket = null;
    this.connected = false;
    this.closed = false;
  }

  url() {
    const q = new URLSearchParams({ audience: this.audience });
    if (this.player !== null) q.set("player", String(this.player));
    if (this.seq !== null) q.set("since", String(this.seq));
    if (this.token) q.set("token", this.token);
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${window.location.host}/ws?${q}`;
  }

  start() {
    this.closed = false;
    this.connect();
    return this;
  }

  stop() {
    this.closed = true;
    if (this.socket) this.socket.close();
  }

  /** Reconnect now with `since=` (after the operator changed something out of band). */
  reconnect() {
    if (this.socket) this.socket.close();
  }

  connect() {
    let socket;
    try {
      socket = new WebSocket(this.url());
    } catch (_) {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.retryMs = 500;
      this.connected = true;
      this.onConnection(true);
    };
    socket.onmessage = (message) => {
      let data;
      try { data = JSON.parse(message.data); } catch (_) { return; }
      this.handle(data);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.connected) this.onConnection(false);
      this.connected = false;
      if (!this.closed) this.scheduleReconnect();
    };
    socket.onerror = () => { /* onclose follows and schedules the retry */ };
  }

  scheduleReconnect() {
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5000);
    window.setTimeout(() => { if (!this.closed) this.connect(); }, wait);
  }

  handle(data) {
    if (data.type === "state" && data.view) {
      const seq = Number(data.seq ?? data.view.seq ?? 0);
      const gameNo = data.view.game_no ?? null;
      if (this.gameNo === undefined || gameNo !== this.gameNo) {
        // The page's first state, or a new game (whose journal counts from the start again):
        // what it already holds is history, not news.
        this.gameNo = gameNo;
        this.baseline = seq;
        this.seq = seq;
        this.seenEvents.clear();
      }
      this.seq = Math.max(this.seq, seq);
      this.view = data.view;
      this.onState(data.view);
    } else if (data.type === "event" && data.event) {
      const seq = Number(data.seq ?? 0);
      if (this.baseline !== null && seq <= this.baseline) return;
      const key = `${seq}:${data.event.kind}:${data.event.code ?? ""}`;
      if (this.seenEvents.has(key)) return;
      this.seenEvents.add(key);
      if (this.seenEvents.size > 500) this.seenEvents = new Set([...this.seenEvents].slice(-200));
      this.seq = this.seq === null ? seq : Math.max(this.seq, seq);
      this.onEvent(data.event, seq);
    }
  }
}

// -- words for the view model ---------------------------------------------------------------------

/** A player's display name from the view model (`Player N` when unnamed). */
export function playerName(view, n) {
  const p = (view?.players ?? []).find((x) => Number(x.n) === Number(n));
  return p?.name || t("player_n", { n });
}

/** A warning in plain words: the translated template for its code, else the engine's message. */
export function warningText(view, w) {
  const names = (w.players ?? []).map((n) => playerName(view, n));
  const vars = {
    player: names[0] ?? "",
    players: names.join(", "),
    message: w.message ?? "",
    code: w.code ?? "",
    rule: w.rule ?? "",
    seq: w.seq ?? "",
  };
  const key = `warning.${w.code}`;
  if (hasText(key)) {
    const template = strings[key] ?? english[key];
    // A template naming a player is only used when the warning names one.
    const needsPlayer = /\{players?\}/.test(template);
    const text = format(template, vars);
    if (!(needsPlayer && names.length === 0) && !/\{\w+\}/.test(text)) return text;
  }
  return w.message || t("warning.generic", vars);
}

/**
 * A move in plain words: the language's template for the move type (`move.<type>`, filled with
 * card names, zone labels and player names) when it has one, else the server's text.
 */
export function moveText(view, catalog, entry) {
  const move = entry.move ?? {};
  const type = move.move ?? move.type ?? "";
  const player = playerName(view, entry.player ?? move.player);
  const keys = [`move.${type}`, `move.${type}.alt`].filter((k) => k in strings);
  if (keys.length) {
    const vars = { player };
    for (const [k, v] of Object.entries(move)) {
      if (k === "player" || k === "move") continue;
      if (k === "target" && typeof v === "number") vars[k] = playerName(view, v);
      else if (k === "from" || k === "zone") vars[k] = zoneLabel(String(v));
      else if (Array.isArray(v)) vars[k] = v.map((c) => catalog?.name(c) ?? c).join(", ");
      else if (typeof v === "string" && catalog?.card(v)) vars[k] = catalog.name(v);
      else vars[k] = v;
    }
    for (const key of keys) {
      const text = format(strings[key], vars);
      if (!/\{\w+\}/.test(text)) return text;
    }
  }
  return entry.text || t("event_move", { player, text: type });
}

/**
 * Translated label for a zone (`zone.<id>`) or a group of numbered zones (`zones.<id>`), else
 * the id in plain words.
 */
export function zoneLabel(id, group = false) {
  const key = `${group ? "zones" : "zone"}.${id}`;
  if (hasText(key)) return t(key);
  const numbered = /^(.*)-(\d+)$/.exec(id);
  if (!group && numbered && hasText(`zone.${numbered[1]}`)) return `${t(`zone.${numbered[1]}`)} ${numbered[2]}`;
  const words = id.replace(/-/g, " ") + (group ? "s" : "");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Tools already used (shown dimmed), when the game reports them. */
export function usedTools(view) {
  return new Set(view?.used_tools ?? view?.details?.used_tools ?? []);
}

/** Actions left for the current player (never below zero). */
export function actionsLeft(view) {
  const allowed = Number(view?.allowed ?? 0);
  const used = Number(view?.actions ?? 0);
  return Math.max(0, allowed - used);
}

/** Split the view's zones into the table's (not owned by a player) grouped by name. */
export function tableGroups(view) {
  const owned = new Set();
  for (const p of view?.players ?? []) for (const z of Object.keys(p.zones ?? {})) owned.add(z);
  const numberedPlayerZone = (z) => {
    const m = /^(.*)-(\d+)$/.exec(z);
    return m && (view?.players ?? []).some((p) => Number(p.n) === Number(m[2]))
      && ["player", "reserve", "hand", "area", "hotbar", "health", "hunger", "battle", "structure"]
        .includes(m[1]);
  };
  const zones = view?.zones ?? {};
  const names = Object.keys(zones).filter((z) => !owned.has(z) && !numberedPlayerZone(z));
  const groups = new Map();
  for (const z of names) {
    const m = /^(.*)-(\d+)$/.exec(z);
    const group = m ? m[1] : z;
    if (!groups.has(group)) groups.set(group, { id: group, numbered: Boolean(m), zones: [] });
    groups.get(group).zones.push({ id: z, number: m ? Number(m[2]) : null });
  }
  for (const g of groups.values()) g.zones.sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
  return [...groups.values()];
}

/** Cards in one zone of the view (`zones`, or a player's `zones`). */
export function zoneCards(view, zone) {
  if (view?.zones && zone in view.zones) return view.zones[zone] ?? [];
  for (const p of view?.players ?? []) if (p.zones && zone in p.zones) return p.zones[zone] ?? [];
  return [];
}

export function zoneTop(view, zone) {
  if (view?.tops && zone in view.tops) return view.tops[zone];
  const cards = zoneCards(view, zone);
  return cards.length ? cards[0] : null;
}

export function zoneCount(view, zone) {
  if (view?.counts && zone in view.counts) return Number(view.counts[zone]);
  return zoneCards(view, zone).length;
}

/** Create an element: `el("div", {class: "x", text: "y"}, child, ...)`. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** An icon from the page's own sprite sheet. */
export function icon(name, cls = "icon") {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", `${cls} icon-${name}`);
  svg.setAttribute("aria-hidden", "true");
  const use = document.createElementNS(ns, "use");
  use.setAttribute("href", `/static/icons.svg#${KNOWN_ICONS.has(name) ? name : "card"}`);
  svg.append(use);
  return svg;
}

const KNOWN_ICONS = new Set([
  "wood", "stone", "iron", "gold", "diamond", "wild", "creeper", "tnt", "craft", "hoe", "shovel",
  "sword", "axe", "pickaxe", "back", "card", "warning", "crown", "camera", "link", "pile",
]);

/** Hue for a kind nobody gave a colour: stable, from its name. */
function hashHue(text) {
  let h = 0;
  for (const ch of text) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

/**
 * A card chip: its name from the catalog, coloured per kind (and per resource or material),
 * with an icon. Identical cards can be shown once with `count`.
 */
export function cardChip(catalog, id, { count = 1, big = false, used = false } = {}) {
  const kind = catalog.kind(id);
  const family = catalog.family(id);
  const chip = el("span", {
    class: `chip kind-${kind}${family ? ` fam-${family}` : ""}${big ? " big" : ""}`
      + `${used ? " used" : ""}${count > 1 ? " stacked" : ""}`,
    dataset: { card: id ?? "", kind },
    title: id ?? t("face_down"),
    style: `--kind-hue: ${hashHue(kind)}`,
  });
  chip.append(icon(catalog.icon(id)), el("span", { class: "chip-name", text: catalog.name(id) }));
  const pts = catalog.points(id);
  if (pts !== null && big) chip.append(el("span", { class: "chip-points", text: String(pts) }));
  if (count > 1) chip.append(el("span", { class: "chip-count", title: `${count}`, text: `${count}` }));
  return chip;
}

/** Cards of a zone, identical ids merged (`[id, count]`), crafted cards before resources. */
export function groupCards(catalog, cards) {
  const counts = new Map();
  for (const c of cards) counts.set(c, (counts.get(c) ?? 0) + 1);
  const order = (id) => ({ craft: 0, hidden: 9 }[catalog.kind(id)] ?? 1);
  return [...counts.entries()].sort((a, b) => order(a[0]) - order(b[0])
    || String(catalog.family(a[0])).localeCompare(String(catalog.family(b[0])))
    || String(a[0]).localeCompare(String(b[0])));
}

/** The language switcher's links: the same page in every language. */
export function languageLinks(current) {
  const box = el("span", { class: "langs" });
  for (const lang of LANGUAGES) {
    const q = new URLSearchParams(window.location.search);
    q.set("lang", lang);
    box.append(el("a", {
      href: `${window.location.pathname}?${q}`,
      class: lang === current ? "current" : null,
      text: lang,
    }));
  }
  return box;
}
