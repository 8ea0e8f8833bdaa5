/*
 * The overlay (OBS browser source): per-player panels with score, holdings and reserve, the
 * table's piles with the card on top, whose turn it is, warnings as toasts that fade, the
 * winner banner, and the game's own panel (panels.js) in the top corner. It renders the view
 * model and nothing else: every `state` message rebuilds the whole picture, so a reload or a
 * reconnect shows exactly the live game.
 */

import {
  Live, actionsLeft, usedTools, cardChip, el, groupCards, icon, loadCatalog, loadI18n, playerName,
  readParams, t, tableGroups, warningText, zoneCount, zoneLabel, zoneTop,
} from "/static/app.js";
import { renderGamePanel } from "/static/panels.js";

const params = readParams("public");
const query = new URLSearchParams(window.location.search);
const TOAST_MS = Math.max(1000, Number(query.get("toast") || 7) * 1000);
const MAX_TOASTS = 4;

let connected = true;
let lastView = null;
let catalog = null;
const toasted = new Set();
let toastBaselineDone = false;

let gameNo;

function warningKey(w, seq) {
  return `${gameNo}:${w.seq ?? seq}:${w.code}:${(w.players ?? []).join(",")}`;
}

function showToast(view, w) {
  const box = document.getElementById("toasts");
  const text = warningText(view, w);
  const plain = (x) => String(x ?? "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
  // The rule's wording comes from the engine, in English: shown on English pages only.
  const english = document.documentElement.lang === "en";
  const rule = english && w.rule && plain(w.rule) !== plain(text) ? w.rule : null;
  const toast = el("div", { class: "toast", role: "status", dataset: { code: w.code ?? "" } },
    icon("warning"),
    el("div", {},
      el("span", { class: "toast-text", text }),
      rule ? el("span", { class: "toast-rule", text: rule }) : null));
  box.append(toast);
  while (box.children.length > MAX_TOASTS) box.firstElementChild.remove();
  window.setTimeout(() => toast.classList.add("fading"), TOAST_MS);
  window.setTimeout(() => toast.remove(), TOAST_MS + 900);
}

function toastWarning(view, w, seq) {
  const key = warningKey(w, seq);
  if (toasted.has(key)) return;
  toasted.add(key);
  showToast(view, w);
}

function toastNewWarnings(view) {
  const warnings = view.warnings ?? [];
  if (view.game_no !== gameNo) {
    gameNo = view.game_no;
    toastBaselineDone = false;
  }
  if (!toastBaselineDone) {
    // What was already there when the page loaded is history: no toasts for it.
    for (const w of warnings) toasted.add(warningKey(w));
    toastBaselineDone = true;
    return;
  }
  for (const w of warnings) toastWarning(view, w);
}

function renderPlayers(view) {
  const box = document.getElementById("players");
  const used = usedTools(view);
  const target = Number(view.target ?? 0);
  box.dataset.count = String((view.players ?? []).length);
  const hasReserve = Object.keys(view.zones ?? {}).some((z) => z.startsWith("reserve"));
  box.replaceChildren(...(view.players ?? []).map((p) => {
    const isCurrent = !view.over && Number(view.current) === Number(p.n);
    const isWinner = view.winner !== null && view.winner !== undefined
      && Number(view.winner) === Number(p.n);
    const holdings = [];
    const reserve = [];
    for (const [zone, cards] of Object.entries(p.zones ?? {})) {
      (zone.startsWith("reserve") ? reserve : holdings).push(...(cards ?? []));
    }
    const score = Number(p.score ?? 0);
    const pct = target > 0 ? Math.min(100, (100 * score) / target) : 0;
    const left = actionsLeft(view);
    return el("div", {
      class: `player panel${isCurrent ? " current" : ""}${isWinner ? " winner" : ""}`,
      dataset: { player: p.n },
    },
    el("div", { class: "player-head" },
      el("span", { class: "player-name", text: p.name || playerName(view, p.n) }),
      el("span", { class: "player-score", text: String(score) }),
      target > 0 ? el("span", { class: "player-target", text: `/ ${target}` }) : null),
    target > 0 ? el("div", { class: "progress" }, el("div", { style: `width: ${pct}%` })) : null,
    isCurrent ? el("div", { class: "player-turn" },
      typeof view.allowed === "number" ? `▶ ${t("actions_left", { n: left })}` : "▶") : null,
    el("div", { class: "holdings" },
      groupCards(catalog, holdings).map(([id, n]) =>
        cardChip(catalog, id, { count: n, used: used.has(id) }))),
    // Only games with a reserve (the Mattel game) show the reserve row.
    hasReserve ? el("div", { class: "reserve" },
      el("span", { text: `${t("reserve")}:` }),
      reserve.length ? reserve.map((id) => cardChip(catalog, id)) : el("span", { text: "—" })) : null);
  }));
}

function renderTurn(view) {
  const bar = document.getElementById("turnbar");
  if (view.over || view.current === null || view.current === undefined) {
    bar.hidden = true;
    return;
  }
  const allowed = Number(view.allowed ?? 0);
  const left = actionsLeft(view);
  const pips = el("span", { class: "pips", title: t("actions_left", { n: left }) });
  for (let i = 0; i < allowed; i += 1) pips.append(el("span", { class: `pip${i < left ? " on" : ""}` }));
  // Games without an action count (Explorers pays in hunger, Angry Birds has rounds) show no
  // pips and no "actions left"; replaceChildren would print a null as text, so none is passed.
  const counted = typeof view.allowed === "number";
  bar.replaceChildren(...[
    el("span", { class: "turn", text: t("turn_n", { n: view.turn ?? "" }) }),
    el("span", { class: "sep", text: "•" }),
    el("span", { class: "who", text: playerName(view, view.current) }),
    counted && allowed > 0 ? pips : null,
    counted ? el("span", { class: "left", text: t("actions_left", { n: left }) }) : null,
  ].filter(Boolean));
  bar.hidden = false;
}

function pileTile(view, zone, label) {
  const count = zoneCount(view, zone);
  const top = zoneTop(view, zone);
  return el("div", { class: `pile${count ? "" : " empty"}`, dataset: { zone } },
    el("div", { class: "pile-label" },
      el("span", { text: label }),
      el("span", { class: "pile-count" }, icon("pile"), ` ${count}`)),
    count ? cardChip(catalog, top) : el("div", { class: "chip-empty", text: t("empty") }));
}

function renderTable(view) {
  const box = document.getElementById("table");
  const groups = tableGroups(view);
  const panels = [];
  const singles = [];
  for (const g of groups) {
    if (g.numbered) {
      panels.push(el("div", { class: "group panel", dataset: { group: g.id } },
        el("div", { class: "group-title", text: zoneLabel(g.id, true) }),
        el("div", { class: "piles" }, g.zones.map((z) => pileTile(view, z.id, `${z.number}`)))));
    } else {
      for (const z of g.zones) {
        if (z.id === "discard" || zoneCount(view, z.id) > 0) singles.push(z.id);
      }
    }
  }
  if (singles.length) {
    panels.push(el("div", { class: "group panel", dataset: { group: "other" } },
      el("div", { class: "group-title", text: "\u00a0" }),
      el("div", { class: "piles" }, singles.map((z) => pileTile(view, z, zoneLabel(z))))));
  }
  box.replaceChildren(...panels);
}

function renderBanner(view) {
  const banner = document.getElementById("banner");
  if (view.winner !== null && view.winner !== undefined) {
    banner.replaceChildren(icon("crown"),
      el("span", { text: t("winner_is", { player: playerName(view, view.winner) }) }));
    banner.hidden = false;
  } else if (view.over) {
    banner.replaceChildren(el("span", { text: t("game_over") }));
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
}

function renderStatus(view) {
  const line = document.getElementById("status-line");
  const problems = [];
  if (!connected) problems.push(t("disconnected"));
  if (view?.status?.camera === "lost") problems.push(t("camera_lost"));
  if (view?.status?.camera === "moved") problems.push(t("camera_moved"));
  line.replaceChildren(...(problems.length ? [icon("link"), problems.join(" • ")] : []));
  line.hidden = problems.length === 0;
}

function renderPanel(view) {
  const box = document.getElementById("game-panel");
  renderGamePanel(box, view, catalog);
  // Warnings toast below the panel, never over it.
  const toasts = document.getElementById("toasts");
  toasts.style.top = box.hidden ? "" : `${box.offsetTop + box.offsetHeight + 12}px`;
}

async function onState(view) {
  catalog = await loadCatalog(view.game);
  lastView = view;
  renderPlayers(view);
  renderTurn(view);
  renderTable(view);
  renderBanner(view);
  renderStatus(view);
  renderPanel(view);
  toastNewWarnings(view);
  document.body.dataset.seq = String(view.seq ?? "");
}

function onEvent(event, seq) {
  if (!lastView || !toastBaselineDone) return;
  if (event.kind === "warning") toastWarning(lastView, event.warning ?? event, seq);
  if (event.kind === "move") for (const w of event.warnings ?? []) toastWarning(lastView, w, seq);
}

async function main() {
  await loadI18n(params.lang);
  window.cardtrack = new Live({
    audience: params.audience,
    player: params.player,
    token: params.token,
    onState,
    onEvent,
    onConnection(up) {
      connected = up;
      renderStatus(lastView);
    },
  }).start();
}

main();
