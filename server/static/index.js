/*
 * The start page: links to the three pages in the chosen language (keeping the token and the
 * audience the page was opened with) and the game being served.
 */

import { languageLinks, loadI18n, readParams } from "/static/app.js";

async function main() {
  const params = readParams("public");
  const { lang } = await loadI18n(params.lang);
  document.getElementById("langs").replaceChildren(languageLinks(lang));
  const q = new URLSearchParams(window.location.search);
  q.set("lang", lang);
  for (const page of ["overlay", "console", "spectator"]) {
    document.getElementById(`link-${page}`).href = `/${page}?${q}`;
  }
  try {
    const response = await fetch("/api/game");
    if (response.ok) {
      const game = await response.json();
      const names = (game.names ?? []).join(", ");
      document.getElementById("game").textContent = `${game.game_name ?? game.game}`
        + (names ? ` — ${names}` : "");
    }
  } catch (_) { /* the links still work */ }
}

main();
