// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The viewer's other views: every round of each section with its games and results
 * (`#rounds`), and the standings with the pairings of the round (`#standings`).
 *
 * Past rounds come from `/rounds.json` (the daemon's journal), the round being played
 * from the feed model, the standings from `/standings.json` (docs/viewer.md). Both are
 * fetched again when a result or a round changes.
 */

import { el } from "./boardview.js";
import { resultText } from "./model.js";
import { prizeRace } from "./prizes.js";

const REFRESH_MS = 800; // results often come several at once: one fetch for them
// A relay gets the standings and past rounds over the broker, a moment apart from the
// boards: what did not change yet is asked once more after this long.
const AGAIN_MS = 3000;
// the cells of the default tie-breaks keep the class of their /standings.json field
const TIEBREAK_CLASSES = { "BH-C1": "buchholz_cut1", BH: "buchholz", SB: "sonneborn_berger" };

export async function fetchText(url) {
  try {
    const reply = await fetch(url, { cache: "no-cache" });
    return reply.ok ? await reply.text() : null;
  } catch {
    return null;
  }
}

function parsed(text) {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export async function fetchJson(url) {
  return parsed(await fetchText(url));
}

/** Fractions the standings write as such: points and tie-breaks in halves or quarters. */
const FRACTIONS = { 0.25: "¼", 0.5: "½", 0.75: "¾" };

/** "2", "1½", "½", "10¾": points and tie-breaks as a standings table shows them, all
 * alike (never "1.5" beside "1½"); another fraction (an average rating) as it comes. */
export function pointsText(points) {
  if (typeof points !== "number" || !Number.isFinite(points)) return "";
  if (points < 0) return `-${pointsText(-points)}`;
  const whole = Math.floor(points);
  const fraction = FRACTIONS[points - whole];
  if (points === whole) return String(whole);
  if (fraction === undefined) return String(points);
  return whole === 0 ? fraction : `${whole}${fraction}`;
}

function roundOf(board) {
  const round = Number.parseInt(String(board.round || "").split(".")[0], 10);
  return Number.isInteger(round) ? round : null;
}

function resultCell(result, final) {
  const cell = el("td", "result", resultText(result));
  cell.dataset.result = result;
  cell.classList.toggle("provisional", result !== "*" && !final);
  return cell;
}

function nameCell(className, name, title) {
  const cell = el("td", className);
  if (title) cell.append(el("span", "title", title), " ");
  cell.append(el("span", "name", name || "?"));
  return cell;
}

/**
 * What the standings count: ["after round 4"] once the round's results are all final,
 * ["after round 3", "round 4: 2 of 5 results"] while some are (they count already).
 */
export function standingsRounds(section) {
  const after = section.after_round > 0 ? [`after round ${section.after_round}`] : [];
  if (section.complete || !section.round) return after;
  const games = (section.pairings ?? []).filter((pair) => pair.board !== null);
  const final = games.filter((pair) => pair.result !== "*" && pair.result_final).length;
  return final === 0 ? after : [...after, `round ${section.round}: ${final} of ${games.length} results`];
}

export class Panels {
  /** @param {any} viewer the page: its feed model and `showGame`. */
  constructor(viewer) {
    this.viewer = viewer;
    this.rounds = null; // /rounds.json
    this.roundsText = null;
    this.standings = null; // /standings.json
    this.standingsText = null;
    this.prizes = new Map(); // section → its race (/prizes.json)
    this.prizesText = null;
    this.players = new Map(); // "section\u0000name" → {title, federation, rating}
    this.timer = null;
    this.again = null;
    this.shown = null;
    this.opened = new Map(); // "section\u0000round" → open: the reader's choice survives redraws
    this.loadStandings();
  }

  /** A player's title and federation from the TRF, or null. */
  player(section, name) {
    return this.players.get(`${section}\u0000${name}`) ?? null;
  }

  show(view) {
    this.shown = view;
    if (view === "rounds") this.loadRounds();
    else this.loadStandings();
    this.draw();
  }

  /** The feed changed: a result or a new round reloads what depends on it. */
  boardChanged(number, type) {
    if (!["result", "board", "snapshot"].includes(type)) return;
    clearTimeout(this.timer);
    clearTimeout(this.again);
    const load = async (retry) => {
      const changed = [this.loadStandings()];
      if (this.shown === "rounds" || type !== "result") changed.push(this.loadRounds());
      const same = (await Promise.all(changed)).includes(false);
      if (same && retry) this.again = setTimeout(() => load(false), AGAIN_MS);
    };
    this.timer = setTimeout(() => load(true), REFRESH_MS);
    if (this.shown === "rounds") this.draw();
  }

  /** Whether /rounds.json changed since the last look. */
  async loadRounds() {
    const text = await fetchText("/rounds.json");
    const data = parsed(text);
    if (data === null || text === this.roundsText) return false;
    this.roundsText = text;
    this.rounds = data;
    if (this.shown === "rounds") this.draw();
    return true;
  }

  /** Whether /standings.json changed since the last look (the prize race is asked too). */
  async loadStandings() {
    const [text, prizes] = await Promise.all([fetchText("/standings.json"), fetchText("/prizes.json")]);
    if (prizes !== null && prizes !== this.prizesText) {
      this.prizesText = prizes;
      this.prizes = new Map((parsed(prizes)?.sections ?? []).map((race) => [race.section, race]));
      if (this.shown === "standings" && text === this.standingsText) this.draw();
    }
    const data = parsed(text);
    if (data === null || text === this.standingsText) return false;
    this.standingsText = text;
    this.standings = data;
    this.players.clear();
    for (const section of data.sections) {
      for (const row of section.standings) {
        this.players.set(`${section.section}\u0000${row.name}`, row);
      }
    }
    this.viewer.playersChanged();
    if (this.shown === "standings") this.draw();
    return true;
  }

  draw() {
    if (this.shown === "rounds") this.drawRounds();
    else if (this.shown === "standings") this.drawStandings();
  }

  // -- rounds ---------------------------------------------------------------------------

  /** Sections in board order, each with its past rounds and the one being played. */
  sections() {
    const sections = new Map();
    const entry = (name) => {
      if (!sections.has(name)) sections.set(name, { name, rounds: new Map() });
      return sections.get(name);
    };
    for (const section of this.rounds?.sections ?? []) {
      for (const round of section.rounds) {
        entry(section.section).rounds.set(round.round, { round: round.round, live: false, games: round.games });
      }
    }
    const boards = [...this.viewer.feed.boards.values()].sort((a, b) => a.board - b.board);
    for (const board of boards) {
      const round = roundOf(board);
      if (round === null) continue;
      const rounds = entry(board.section).rounds;
      if (!rounds.has(round) || !rounds.get(round).live) rounds.set(round, { round, live: true, games: [] });
      rounds.get(round).games.push(board);
    }
    return [...sections.values()];
  }

  drawRounds() {
    const main = document.getElementById("rounds");
    const sections = this.sections();
    main.replaceChildren(...sections.map((section) => this.sectionRounds(section)));
    if (sections.length === 0) main.append(el("p", "empty", "No rounds yet."));
  }

  sectionRounds(section) {
    const part = el("section", "round-list");
    part.dataset.section = section.name;
    if (section.name) part.append(el("h2", "", section.name));
    const rounds = [...section.rounds.values()].sort((a, b) => b.round - a.round);
    for (const round of rounds) {
      const block = el("details", "round");
      block.dataset.round = String(round.round);
      const key = `${section.name}\u0000${round.round}`;
      const initial = this.opened.get(key) ?? (round.live || rounds.length === 1);
      block.open = initial;
      // setting `open` fires "toggle" too: only a change from what was drawn is the reader's
      block.addEventListener("toggle", () => {
        if (this.opened.has(key) || block.open !== initial) this.opened.set(key, block.open);
      });
      const summary = el("summary", "", `Round ${round.round}${round.live ? " · being played" : ""}`);
      const query = section.name ? `?section=${encodeURIComponent(section.name)}` : "";
      const link = el("a", "pgn", "PGN");
      link.href = `/round/${round.round}.pgn${query}`;
      link.download = `round-${round.round}.pgn`;
      summary.append(" ", link);
      block.append(summary, this.gamesTable(section.name, round));
      part.append(block);
    }
    return part;
  }

  gamesTable(section, round) {
    const table = el("table", "games");
    const body = el("tbody");
    for (const game of round.games) {
      const row = el("tr", "game");
      row.dataset.board = String(game.board);
      row.tabIndex = 0;
      row.append(el("td", "board", String(game.board)));
      row.append(nameCell("white", game.white, this.player(section, game.white)?.title));
      row.append(resultCell(game.result, game.result_final));
      row.append(nameCell("black", game.black, this.player(section, game.black)?.title));
      const target = { board: game.board, round: round.live ? null : round.round, section: section || null };
      row.addEventListener("click", () => this.viewer.showGame(target));
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter") this.viewer.showGame(target);
      });
      body.append(row);
    }
    table.append(body);
    return table;
  }

  // -- standings --------------------------------------------------------------------------

  drawStandings() {
    const main = document.getElementById("standings");
    const sections = this.standings?.sections ?? [];
    main.replaceChildren(...sections.map((section) => this.sectionStandings(section)));
    if (sections.length === 0) {
      main.append(el("p", "empty", "No standings: the sections have no tournament file (TRF)."));
    }
  }

  sectionStandings(section) {
    const part = el("section", "standings-section");
    part.dataset.section = section.section;
    part.append(el("h2", "", [section.section || "Standings", ...standingsRounds(section)].join(" · ")));
    const table = el("table", "standings");
    const head = el("tr");
    // the section's tie-breaks, in the order its regulations name them (BH-C1, BH, SB unless
    // the TRF or the configuration says otherwise)
    const codes = section.tiebreaks ?? ["BH-C1", "BH", "SB"];
    for (const [text, name] of [["#", "place"], ["Player", "player"], ["Fed", "fed"], ["Rtg", "rating"], ["Pts", "points"]]) {
      head.append(el("th", name, text));
    }
    for (const code of codes) {
      const th = el("th", "tb", code);
      th.dataset.tiebreak = code;
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    for (const row of section.standings) {
      const tr = el("tr");
      tr.dataset.rank = String(row.start_rank);
      tr.append(el("td", "place", String(row.place)));
      tr.append(nameCell("player", row.name, row.title));
      tr.append(el("td", "fed", row.federation || ""));
      tr.append(el("td", "rating", row.rating ? String(row.rating) : ""));
      tr.append(el("td", "points", pointsText(row.points)));
      const values = row.tiebreaks ?? [row.buchholz_cut1, row.buchholz, row.sonneborn_berger];
      codes.forEach((code, index) => {
        const value = values[index];
        const text = typeof value === "number" ? pointsText(value) : String(value ?? "");
        const td = el("td", `tb ${TIEBREAK_CLASSES[code] ?? ""}`.trim(), text);
        td.dataset.tiebreak = code;
        tr.append(td);
      });
      body.append(tr);
    }
    table.append(thead, body);
    part.append(table);
    if (section.pairings.length > 0) {
      part.append(el("h3", "", `Pairings · round ${section.round}`));
      part.append(this.pairingsTable(section));
    }
    const race = prizeRace(this.prizes.get(section.section));
    if (race !== null) part.append(race);
    return part;
  }

  pairingsTable(section) {
    const table = el("table", "pairings");
    const body = el("tbody");
    for (const pair of section.pairings) {
      const row = el("tr");
      row.append(el("td", "board", pair.board === null ? "" : String(pair.board)));
      row.append(nameCell("white", pair.white.name, pair.white.title));
      row.append(resultCell(pair.result, pair.result_final));
      row.append(nameCell("black", pair.black === null ? pair.bye : pair.black.name, pair.black?.title));
      body.append(row);
    }
    table.append(body);
    return table;
  }
}
