/*
 * The spectator screen: a second screen for the people at the table, with big cards for every
 * pile top, each player's cards, the scores and the move log (newest first, warnings inline).
 * Like the overlay it renders the view model only and rebuilds itself from each `state`.
 */

import {
  Live, actionsLeft, usedTools, el, groupCards, icon, languageLinks, loadCatalog, loadI18n, moveText,
  playerName, readParams, t, tableGroups, warningText, zoneCount, zoneLabel, zoneTop,
} from "/static/app.js";
import { renderGamePanel } from "/static/panels.js";

const params = readParams("public");
let catalog = null;

function bigCard(id, { label = "", count = null, small = false, empty = false, used = false } = {}) {
  if (empty) {
    return el("div", { class: `bigcard empty${small ? " small" : ""}` },
      el("span", { class: "card-zone", text: label }),
      el("span", { class: "card-name", text: t("empty") }),
      el("span", {}));
  }
  const kind = catalog.kind(id);
  const family = catalog.family(id);
  const pts = catalog.points(id);
  return el("div", {
    class: `bigcard kind-${kind}${family ? ` fam-${family}` : ""}${id === null ? " hidden" : ""}`
      + `${small ? " small" : ""}${used ? " used" : ""}`,
    dataset: { card: id ?? "" },
  },
  el("span", { class: "card-zone", text: label || (pts !== null ? `★ ${pts}` : "") }),
  icon(catalog.icon(id)),
  el("span", { class: "card-name", text: catalog.name(id) }),
  count !== null && count > 1 ? el("span", { class: "card-count", text: String(count) }) : null);
}

function renderHeader(view) {
  document.getElementById("game-name").textContent = view.game_name || view.game || "cardtrack";
  const info = document.getElementById("turninfo");
  if (view.over || view.current === null || view.current === undefined) {
    info.textContent = view.over ? t("game_over") : "";
  } else {
    info.replaceChildren(
      el("span", { text: t("turn_n", { n: view.turn ?? "" }) }), " • ",
      el("span", { text: playerName(view, view.current) }), " • ",
      el("span", { text: t("actions_left", { n: actionsLeft(view) }) }));
  }
}

function renderWinner(view) {
  const box = document.getElementById("winner");
  if (view.winner !== null && view.winner !== undefined) {
    box.replaceChildren(icon("crown"), t("winner_is", { player: playerName(view, view.winner) }));
    box.hidden = false;
  } else {
    box.hidden = true;
  }
}

function renderScores(view) {
  const target = Number(view.target ?? 0);
  document.getElementById("scores").replaceChildren(...(view.players ?? []).map((p) => {
    const current = !view.over && Number(view.current) === Number(p.n);
    const winner = view.winner !== null && view.winner !== undefined
      && Number(view.winner) === Number(p.n);
    return el("div", {
      class: `score-card${current ? " current" : ""}${winner ? " winner" : ""}`,
      dataset: { player: p.n },
    },
    el("div", { class: "name", text: p.name || playerName(view, p.n) }),
    el("div", { class: "score", text: String(p.score ?? 0) }),
    target > 0 ? el("div", { class: "target", text: t("target_score", { target }) }) : null);
  }));
}

function renderPiles(view) {
  const cards = [];
  for (const g of tableGroups(view)) {
    for (const z of g.zones) {
      const count = zoneCount(view, z.id);
      if (!g.numbered && count === 0 && z.id !== "discard") continue;
      const label = g.numbered ? `${zoneLabel(g.id)} ${z.number}` : zoneLabel(z.id);
      cards.push(count
        ? bigCard(zoneTop(view, z.id), { label, count })
        : bigCard(null, { label, empty: true }));
    }
  }
  document.getElementById("piles").replaceChildren(...cards);
}

function renderAreas(view) {
  const used = usedTools(view);
  document.getElementById("areas").replaceChildren(...(view.players ?? []).map((p) => {
    const all = [];
    for (const [zone, zoneCards] of Object.entries(p.zones ?? {})) {
      const reserve = zone.startsWith("reserve");
      for (const [id, n] of groupCards(catalog, zoneCards ?? [])) {
        all.push(bigCard(id, { small: true, count: n, label: reserve ? t("reserve") : "",
          used: used.has(id) }));
      }
    }
    return el("div", { class: "area", dataset: { player: p.n } },
      el("h3", { text: `${p.name || playerName(view, p.n)} — ${p.score ?? 0}` }),
      el("div", { class: "cards" }, all.length ? all : el("span", { text: t("empty") })));
  }));
}

function renderLog(view) {
  const bySeq = new Map();
  for (const w of view.warnings ?? []) {
    if (!bySeq.has(w.seq)) bySeq.set(w.seq, []);
    bySeq.get(w.seq).push(w);
  }
  const moves = [...(view.moves ?? [])].reverse();
  const log = document.getElementById("log");
  if (!moves.length) {
    log.replaceChildren(el("li", { text: t("no_moves") }));
    return;
  }
  log.replaceChildren(...moves.map((m) => {
    const warnings = bySeq.get(m.seq) ?? [];
    return el("li", { class: warnings.length ? "warned" : null, dataset: { seq: m.seq } },
      el("span", { class: "seq", text: String(m.seq) }),
      el("span", {},
        moveText(view, catalog, m),
        warnings.map((w) => el("span", { class: "wtext" }, icon("warning"), " ", warningText(view, w)))));
  }));
}

async function onState(view) {
  catalog = await loadCatalog(view.game);
  renderHeader(view);
  renderWinner(view);
  renderScores(view);
  renderGamePanel(document.getElementById("game-panel"), view, catalog);
  renderPiles(view);
  renderAreas(view);
  renderLog(view);
  document.body.dataset.seq = String(view.seq ?? "");
}

async function main() {
  const { lang } = await loadI18n(params.lang);
  document.getElementById("langs").replaceChildren(languageLinks(lang));
  window.cardtrack = new Live({
    audience: params.audience,
    player: params.player,
    token: params.token,
    onState,
    onConnection(up) {
      const box = document.getElementById("link-state");
      box.textContent = up ? "" : t("disconnected");
      box.hidden = up;
    },
  }).start();
}

main();
