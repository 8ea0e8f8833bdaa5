/*
 * Game panels: what one game adds to the overlay and the spectator screen beyond players,
 * piles and scores, drawn from the view model's `details` and `zones` only. Explorers: the
 * mob deck's height, the chance that the next reveal is the game-over card, the mobs on the
 * table and each chest's progress. Angry Birds Power Cards: the round on the table, its stat,
 * each player's value and the winner (or the tie) as soon as every card lies in its slot; while
 * the stat is not named (said aloud at a camera table), the winner or the tie under every stat.
 * mk. I: health and hunger per player, daylight, the die and the weather with its turns left.
 * Every number is wrapped as its own isolated run, so right-to-left pages stay readable.
 */

import { cardChip, el, playerName, t, zoneCards, zoneCount } from "/static/app.js";

function stat(label, value, key) {
  return el("div", { class: "gp-stat", dataset: { stat: key } },
    el("span", { class: "gp-label", text: label }),
    el("bdi", { class: "gp-value", text: String(value) }));
}

function percent(chance) {
  const p = 100 * Number(chance ?? 0);
  if (p === 0) return "0%";
  return `${p >= 10 ? Math.round(p) : p.toFixed(1)}%`;
}

function explorersPanel(view, catalog) {
  const d = view.details ?? {};
  const chance = Number(d.game_over_chance ?? 0);
  const mobs = zoneCards(view, "mobs").filter((c) => c !== null && c !== undefined);
  const chests = d.chest_progress ?? [];
  return [
    el("div", { class: "gp-row" },
      stat(t("panel.mob_deck"), zoneCount(view, "mob-deck"), "mob-deck"),
      el("div", { class: `gp-stat${chance > 0 ? " danger" : ""}`, dataset: { stat: "game-over" } },
        el("span", { class: "gp-label", text: t("panel.game_over_chance") }),
        el("bdi", { class: "gp-value", dir: "ltr", text: percent(chance) }))),
    el("div", { class: "gp-line", dataset: { stat: "mobs" } },
      el("span", { class: "gp-label", text: t("panel.mobs_on_table", { n: mobs.length }) }),
      el("div", { class: "gp-chips" }, mobs.map((id) => cardChip(catalog, id)))),
    chests.length ? el("div", { class: "gp-chests", dataset: { stat: "chests" } },
      chests.map((c) => {
        const have = Math.min((c.items ?? []).length, (c.needs ?? []).length);
        const need = (c.needs ?? []).length;
        return el("div", { class: `gp-chest${c.filled ? " filled" : ""}`, dataset: { chest: c.chest } },
          el("span", { class: "gp-label", text: catalog.name(c.chest) }),
          el("bdi", { class: "gp-value", text: c.filled ? "✔" : `${have}/${need}` }));
      })) : null,
  ];
}

/** "P wins" or "Tie: P, Q" for a `{winner, tied}` outcome. */
function outcomeText(view, outcome, winnerKey) {
  const winner = outcome?.winner;
  if (winner !== null && winner !== undefined) {
    return t(winnerKey, { player: playerName(view, winner) });
  }
  const tied = (outcome?.tied ?? []).map(Number);
  return t("panel.round_tie", { players: tied.map((n) => playerName(view, n)).join(", ") });
}

/**
 * Every card is down but the stat is not named: one row per stat (the order of `by_stat`),
 * each card's value under it (`values_by_stat`) and the winner or the tie. Rows share the
 * grid's columns (subgrid), so values line up under the seat names in either direction.
 */
function byStatRows(view, round, seats) {
  const byStat = round.by_stat ?? {};
  const valuesByStat = round.values_by_stat ?? {};
  // With three or four seats the result takes a line of its own under the values.
  const many = seats.length > 2;
  const grid = el("div", { class: `gp-by-stat${many ? " many" : ""}`, style: `--seats: ${seats.length}` },
    el("div", { class: "gp-by-stat-head" },
      el("span"),
      seats.map((n) => el("bdi", { class: "gp-cell gp-name", title: playerName(view, n),
        dataset: { player: n }, text: playerName(view, n) })),
      el("span")));
  for (const [key, outcome] of Object.entries(byStat)) {
    const winner = outcome?.winner;
    const hasWinner = winner !== null && winner !== undefined;
    const tied = (outcome?.tied ?? []).map(Number);
    const values = valuesByStat[key] ?? {};
    grid.append(el("div", {
      class: `gp-announce-stat${hasWinner ? "" : " tie"}`,
      dataset: { stat: key, winner: hasWinner ? String(winner) : "" },
    },
    el("span", { class: "gp-label", text: t(`stat.${key}`, {}, key) }),
    seats.map((n) => {
      const v = values[String(n)];
      const won = hasWinner && Number(winner) === n;
      return el("bdi", {
        class: `gp-cell gp-value${won ? " won" : ""}${tied.includes(n) ? " tied" : ""}`,
        dataset: { player: n },
        text: v === undefined || v === null ? "–" : String(v),
      });
    }),
    el("span", { class: "gp-result", text: outcomeText(view, outcome, "panel.stat_winner") })));
  }
  return [el("div", { class: "gp-note", text: t("panel.by_stat") }), grid];
}

function birdsPanel(view, catalog) {
  const d = view.details ?? {};
  const round = d.pending_round;
  const statName = (s) => (s ? t(`stat.${s}`, {}, s) : t("panel.stat_unnamed"));
  const rows = [];
  if (!round) {
    rows.push(el("div", { class: "gp-line" },
      el("span", { class: "gp-label", text: t("panel.stat") }),
      el("span", { class: "gp-value", text: statName(d.stat) })),
    el("div", { class: "gp-note", text: t("panel.waiting_cards") }));
    return rows;
  }
  rows.push(el("div", { class: "gp-line", dataset: { stat: "stat" } },
    el("span", { class: "gp-label", text: t("panel.stat") }),
    el("span", { class: "gp-value", text: statName(round.stat) })));
  const cards = round.cards ?? {};
  const values = round.values ?? {};
  const table = el("div", { class: "gp-values" });
  const seats = [...new Set([...Object.keys(cards), ...(round.waiting ?? []).map(String)])]
    .map(Number).sort((a, b) => a - b);
  // Every card is down and the stat is still to be said: announce the outcome of each stat.
  const unnamed = !round.stat && !(round.waiting ?? []).length
    && Object.keys(round.by_stat ?? {}).length > 0;
  for (const n of seats) {
    const won = round.complete && Number(round.winner) === n;
    const tied = round.complete && (round.tied ?? []).map(Number).includes(n);
    const card = cards[String(n)];
    table.append(el("div", {
      class: `gp-seat${won ? " won" : ""}${tied ? " tied" : ""}`, dataset: { player: n },
    },
    el("span", { class: "gp-name", text: playerName(view, n) }),
    unnamed
      ? el("bdi", { class: "gp-card", dataset: { card: card ?? "" }, text: catalog.name(card) })
      : el("bdi", { class: "gp-value", text: n in values || String(n) in values
        ? String(values[String(n)]) : "…" })));
  }
  rows.push(table);
  if (round.complete) {
    const text = outcomeText(view, round, "panel.round_winner");
    rows.push(el("div", { class: "gp-announce", dataset: { winner: round.winner ?? "" }, text }));
  } else if (unnamed) {
    rows.push(...byStatRows(view, round, seats));
  } else {
    rows.push(el("div", { class: "gp-note", text: t("panel.waiting_cards") }));
  }
  if ((round.pot ?? []).length) {
    rows.push(el("div", { class: "gp-note", text: t("panel.pot", { n: round.pot.length }) }));
  }
  return rows;
}

function mk1Panel(view, catalog) {
  const d = view.details ?? {};
  const health = d.health ?? [];
  const hunger = d.hunger ?? [];
  const seats = el("div", { class: "gp-values" });
  for (const p of view.players ?? []) {
    const n = Number(p.n);
    seats.append(el("div", { class: "gp-seat", dataset: { player: n } },
      el("span", { class: "gp-name", text: p.name || playerName(view, n) }),
      el("span", { class: "gp-health", title: t("panel.health") },
        "❤ ", el("bdi", { class: "gp-value", text: String(health[n - 1] ?? zoneCount(view, `health-${n}`)) })),
      el("span", { class: "gp-hunger", title: t("panel.hunger") },
        "🍗 ", el("bdi", { class: "gp-value", text: String(hunger[n - 1] ?? zoneCount(view, `hunger-${n}`)) }))));
  }
  const weather = d.weather;
  return [
    el("div", { class: "gp-legend" },
      el("span", { text: `❤ ${t("panel.health")}` }), el("span", { text: `🍗 ${t("panel.hunger")}` })),
    seats,
    el("div", { class: "gp-row" },
      stat(d.night ? t("panel.night") : t("panel.daylight"), d.daylight ?? zoneCount(view, "daylight"), "daylight"),
      stat(t("panel.die"), d.die ? String(d.die) : "—", "die")),
    el("div", { class: "gp-line", dataset: { stat: "weather" } },
      el("span", { class: "gp-label", text: t("panel.weather") }),
      weather ? cardChip(catalog, weather) : el("span", { class: "gp-value", text: t("panel.clear") }),
      weather && d.weather_turns_left !== null && d.weather_turns_left !== undefined
        ? el("span", { class: "gp-note", text: t("panel.turns_left", { n: d.weather_turns_left }) })
        : null),
  ];
}

const PANELS = {
  "minecraft-explorers": explorersPanel,
  "angry-birds-power-cards": birdsPanel,
  "minecraft-mk1": mk1Panel,
};

/** Fill `box` with the game's panel (hidden for a game that has none). */
export function renderGamePanel(box, view, catalog) {
  const make = PANELS[view?.game];
  if (!make) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.dataset.game = view.game;
  box.replaceChildren(
    el("div", { class: "gp-title", text: t(`panel.title.${view.game}`, {}, view.game_name ?? view.game) }),
    ...make(view, catalog).filter(Boolean));
  box.hidden = false;
}
