// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The hall screen at `/hall`: a few boards large, clocks readable across the room,
 * cycling through the round's boards when there are more than fit (docs/viewer.md).
 *
 *   /hall                      every board, 4 at a time, 20 s each
 *   /hall?section=U12          one section's boards
 *   /hall?boards=1,2,7         these boards
 *   &per=6 &every=30           boards per screen (1-12), seconds per screen (5-600)
 *
 * When only some boards have an e-board (the top boards), the screens show those, and the
 * others come as a compact table of pairings and results, one more screen of the cycle
 * (unless `boards=` names the boards to show).
 *
 * No controls: it connects, reconnects and follows round changes by itself, from the
 * same feed model as the viewer (model.js). Between rounds (every board shown has its
 * final result) the cycle also shows the prize race of the sections shown, when the
 * event has prizes (`/prizes.json`, prizes.js).
 */

import { BoardView, el, fillListed, listedTable, splitLive } from "./boardview.js";
import { Action, FeedState, resultText, socketUrl, statusText } from "./model.js";
import { fetchJson } from "./panels.js";
import { prizeRace } from "./prizes.js";
import { ReconnectingSocket, State, stateText } from "./socket.js";

const TICK_MS = 200;
const PING_MS = 20000;
const PONG_MS = 10000;
const PRIZES_MS = 800; // results often come several at once: one fetch for them
const PRIZES = "prizes"; // the page of the prize race in the cycle
const LISTED_ROWS = 16; // rows of the boards without e-board on one screen

function whole(value, low, high, fallback) {
  const number = Number.parseInt(value ?? "", 10);
  return Number.isInteger(number) ? Math.min(high, Math.max(low, number)) : fallback;
}

/** What the address asks for: `{section, boards, per, every}`. */
export function hallOptions(search) {
  const query = new URLSearchParams(search);
  const boards = (query.get("boards") ?? "")
    .split(",")
    .map((part) => Number.parseInt(part, 10))
    .filter((number) => Number.isInteger(number) && number > 0);
  return {
    section: query.get("section"),
    boards: boards.length > 0 ? new Set(boards) : null,
    per: whole(query.get("per"), 1, 12, 4),
    every: whole(query.get("every"), 1, 600, 20),
  };
}

/**
 * The hall cards' font size in px for boards `size` px wide: clamp(16px, 3.2vh, 64px),
 * and no more than a tenth of the board, so that a rating and a clock ("1:29:58") share
 * a line on a narrow or a portrait screen.
 */
function cardFont(size = Infinity) {
  return Math.min(64, Math.max(16, 0.032 * window.innerHeight), Math.max(12, size / 10));
}

/**
 * Columns, rows and the width of a board for `count` boards in the element `main`; a
 * card holds `lines` lines of its font besides its board (its head, two player rows).
 */
function gridFor(count, main, lines = 8) {
  const style = getComputedStyle(main);
  const px = (name) => Number.parseFloat(style[name]) || 0;
  const width = main.clientWidth - px("paddingLeft") - px("paddingRight");
  const height = main.clientHeight - px("paddingTop") - px("paddingBottom");
  let best = { columns: 1, rows: count, size: 0 };
  for (let columns = 1; columns <= count; columns += 1) {
    const rows = Math.ceil(count / columns);
    const across = (width - (columns - 1) * px("columnGap")) / columns;
    const down = (height - (rows - 1) * px("rowGap")) / rows;
    const size = Math.min(across, down - lines * cardFont(across));
    if (size > best.size) best = { columns, rows, size };
  }
  best.size = Math.max(best.size, 0);
  return best;
}

class Hall {
  constructor() {
    this.options = hallOptions(location.search);
    this.per = this.options.per; // fewer on a small screen: see fit()
    this.lines = 8; // a card's height besides its board, in lines of its font (measured)
    this.feed = new FeedState();
    this.page = 0;
    this.shownKey = "";
    this.views = new Map(); // board number → {view, head, card}
    this.listed = new Map(); // board number → its row on a screen of boards without e-board
    this.prizes = []; // /prizes.json's sections shown here
    this.prizesText = "";
    this.prizesTimer = null;
    this.pingAt = null;
    this.pongTimer = null;
    this.main = document.getElementById("hall-boards");
    this.socket = new ReconnectingSocket({
      url: () => socketUrl(location, "/ws", this.feed.seq),
      onMessage: (message) => this.receive(message),
      onState: (state, detail) => this.showConnection(state, detail),
      onOpen: () => this.ping(),
    });
  }

  start() {
    window.addEventListener("online", () => this.socket.retrySoon());
    window.addEventListener("resize", () => this.draw(true));
    setInterval(() => this.tick(), TICK_MS);
    setInterval(() => this.ping(), PING_MS);
    setInterval(() => this.turn(), this.options.every * 1000);
    this.socket.start();
    this.loadPrizes();
  }

  /** The prize race of the sections shown, fetched again after results. */
  async loadPrizes() {
    const data = await fetchJson("/prizes.json");
    const { section } = this.options;
    const races = (data?.sections ?? []).filter((race) => section === null || race.section === section);
    const text = JSON.stringify(races);
    if (text === this.prizesText) return;
    this.prizesText = text;
    this.prizes = races;
    this.draw(false);
  }

  /** Between rounds: every board shown has its final result. */
  roundOver() {
    const boards = this.chosen();
    return boards.length > 0 && boards.every((board) => board.result !== "*" && board.result_final);
  }

  receive(message) {
    if (message.type === "pong") {
      clearTimeout(this.pongTimer);
      this.pongTimer = null;
      if (this.pingAt !== null) this.feed.receivePong(message.server_time, this.pingAt, Date.now() / 1000);
      return;
    }
    const outcome = this.feed.receive(message, Date.now() / 1000);
    if (outcome.action === Action.SNAPSHOT) this.draw(true);
    else if (outcome.action === Action.CHANGED) this.changed(outcome.board, outcome.type);
    else if (outcome.action === Action.GAP) this.socket.send({ type: "resume", since: this.feed.seq });
    else if (outcome.action === Action.RESYNC) {
      this.feed.seq = null;
      this.socket.restart();
    }
    document.body.dataset.seq = String(this.feed.seq);
  }

  ping() {
    if (this.pongTimer !== null || !this.socket.send({ type: "ping" })) return;
    this.pingAt = Date.now() / 1000;
    this.pongTimer = setTimeout(() => {
      this.pongTimer = null;
      this.socket.restart();
    }, PONG_MS);
  }

  showConnection(state, detail) {
    if (state !== State.OPEN) {
      clearTimeout(this.pongTimer);
      this.pongTimer = null;
    }
    const shown = document.getElementById("connection");
    shown.textContent = stateText(state, detail, "live");
    shown.dataset.state = state;
    document.body.dataset.connection = state;
  }

  /** The boards the address selects, in board order. */
  chosen() {
    const { section, boards } = this.options;
    return [...this.feed.boards.values()]
      .filter((board) => (section === null || board.section === section) && (boards === null || boards.has(board.board)))
      .filter((board) => board.white || board.black || board.moves.length > 0)
      .sort((a, b) => a.board - b.board);
  }

  pages() {
    const chosen = this.chosen();
    const { live: boards, listed } = this.options.boards === null ? splitLive(chosen) : { live: chosen, listed: [] };
    const pages = [];
    for (let start = 0; start < boards.length; start += this.per) {
      pages.push(boards.slice(start, start + this.per).map((board) => board.board));
    }
    for (let start = 0; start < listed.length; start += LISTED_ROWS) {
      pages.push({ listed: listed.slice(start, start + LISTED_ROWS).map((board) => board.board) });
    }
    if (this.prizes.length > 0 && this.roundOver()) pages.push(PRIZES);
    return pages;
  }

  turn() {
    const count = this.pages().length;
    if (count <= 1) return;
    this.page = (this.page + 1) % count;
    this.draw(false);
  }

  changed(number, type) {
    if (type === "result" || type === "board") {
      clearTimeout(this.prizesTimer);
      this.prizesTimer = setTimeout(() => this.loadPrizes(), PRIZES_MS);
    }
    if (type === "board") return this.draw(false);
    if (this.views.has(number) || this.listed.has(number)) this.drawBoard(number);
  }

  /** As many boards per screen as asked, or fewer, so that a board stays large. */
  fit() {
    const wanted = Math.min(160, 0.4 * Math.min(this.main.clientWidth, this.main.clientHeight));
    for (let count = this.options.per; count > 1; count -= 1) {
      if (gridFor(count, this.main, this.lines).size >= wanted) return count;
    }
    return 1;
  }

  /** Lay out the current page's boards (again when they or the screen changed). */
  draw(force) {
    if (force) this.per = this.fit();
    const pages = this.pages();
    if (this.page >= pages.length) this.page = 0;
    if (pages[this.page] === PRIZES) return this.drawPrizes(pages.length, force);
    if (pages[this.page]?.listed !== undefined) return this.drawListed(pages.length, pages[this.page].listed, force);
    const numbers = pages[this.page] ?? [];
    const key = JSON.stringify([numbers, window.innerWidth, window.innerHeight]);
    this.showHeader(pages.length, numbers);
    if (!force && key === this.shownKey) return;
    this.shownKey = key;
    // the lines beside a board are estimated, then measured (a long name, a missing
    // rating): when a card needs more, its board is made smaller, never its clocks cut
    const grid = gridFor(Math.max(1, numbers.length), this.main, this.lines);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      this.lay(numbers, grid);
      const { over, extra } = this.measure();
      if (over < 1) break;
      grid.size -= over;
      this.lines = extra / cardFont(grid.size);
    }
  }

  /** The prize race of the sections shown, as one screen. */
  drawPrizes(pageCount, force) {
    document.getElementById("hall-title").textContent = "Prizes if the event ended now";
    document.getElementById("hall-page").textContent = `${this.page + 1} / ${pageCount}`;
    const key = JSON.stringify([PRIZES, this.prizesText, window.innerWidth, window.innerHeight]);
    if (!force && key === this.shownKey) return;
    this.shownKey = key;
    for (const { view } of this.views.values()) view?.destroy();
    this.views.clear();
    this.listed.clear();
    const panel = el("section", "hall-prizes");
    for (const race of this.prizes) {
      if (race.section) panel.append(el("h2", "", race.section));
      panel.append(prizeRace(race));
    }
    this.main.style.gridTemplateColumns = "";
    this.main.dataset.boards = "";
    this.main.replaceChildren(panel);
  }

  /** The boards without e-board of the page, as a table of pairings and results. */
  drawListed(pageCount, numbers, force) {
    this.showHeader(pageCount, numbers);
    const key = JSON.stringify(["listed", numbers, window.innerWidth, window.innerHeight]);
    if (!force && key === this.shownKey) return;
    this.shownKey = key;
    for (const { view } of this.views.values()) view?.destroy();
    this.views.clear();
    this.listed.clear();
    const boards = numbers.map((number) => this.feed.boards.get(number)).filter((board) => board !== undefined);
    const panel = el("section", "hall-listed");
    panel.append(listedTable(boards, this.listed));
    this.main.style.gridTemplateColumns = "";
    this.main.dataset.boards = numbers.join(",");
    this.main.replaceChildren(panel);
    for (const board of boards) fillListed(this.listed.get(board.board), board);
  }

  lay(numbers, grid) {
    for (const { view } of this.views.values()) view?.destroy();
    this.views.clear();
    this.listed.clear();
    this.main.style.gridTemplateColumns = `repeat(${grid.columns}, ${Math.floor(grid.size)}px)`;
    this.main.style.setProperty("--hall-font", `${cardFont(grid.size)}px`);
    this.main.replaceChildren(...numbers.map((number) => this.card(number)));
    if (numbers.length === 0) this.main.append(el("p", "empty", "No boards to show yet."));
    this.main.dataset.boards = numbers.join(",");
    for (const number of numbers) this.drawBoard(number);
  }

  /**
   * How many px the cards drawn lack (cut at their own or the screen's bottom), and the
   * most any of them needs besides its board.
   */
  measure() {
    const bottom = this.main.getBoundingClientRect().bottom;
    let over = 0;
    let extra = 0;
    for (const card of this.main.querySelectorAll(".hall-card")) {
      const box = card.querySelector(".board-box");
      if (box === null) continue;
      over = Math.max(over, card.scrollHeight - card.clientHeight, card.getBoundingClientRect().bottom - bottom);
      extra = Math.max(extra, card.scrollHeight - box.getBoundingClientRect().height);
    }
    return { over, extra };
  }

  /** "Open · Round 5", for each section whose boards are on the screen ("Open · Round 5 / U12 · Round 2"). */
  showHeader(pageCount, numbers) {
    const titles = [];
    for (const number of numbers) {
      const board = this.feed.boards.get(number);
      const round = board ? String(board.round || "").split(".")[0] : "";
      const section = board ? board.section : this.options.section;
      const title = [section, round ? `Round ${round}` : ""].filter(Boolean).join(" · ");
      if (!titles.includes(title)) titles.push(title);
    }
    if (titles.length === 0 && this.options.section) titles.push(this.options.section);
    document.getElementById("hall-title").textContent = titles.join(" / ");
    document.getElementById("hall-page").textContent = pageCount > 1 ? `${this.page + 1} / ${pageCount}` : "";
    const delay = this.feed.delay;
    document.getElementById("delay").textContent = delay > 0 ? `delayed by ${Math.round(delay / 60)} min` : "";
  }

  card(number) {
    const card = el("article", "hall-card");
    card.dataset.board = String(number);
    const head = { number: el("span", "number", `Board ${number}`), status: el("span", "status"), result: el("span", "result") };
    const top = el("header", "hall-card-head");
    top.append(head.number, head.status, head.result);
    const body = el("div", "view");
    card.append(top, body);
    this.views.set(number, { card, head, body, view: null });
    return card;
  }

  drawBoard(number) {
    const board = this.feed.boards.get(number);
    const row = this.listed.get(number);
    if (board !== undefined && row !== undefined) fillListed(row, board);
    const entry = this.views.get(number);
    if (board === undefined || entry === undefined) return;
    if (entry.view === null) entry.view = new BoardView(entry.body);
    entry.view.update(board);
    entry.head.status.textContent = board.status === "online" ? "" : statusText(board.status);
    entry.head.result.textContent = resultText(board.result);
    entry.head.result.classList.toggle("provisional", board.result !== "*" && !board.result_final);
    entry.view.tick(this.feed.serverNow(Date.now() / 1000), this.feed.delay);
  }

  tick() {
    const now = this.feed.serverNow(Date.now() / 1000);
    for (const { view } of this.views.values()) view?.tick(now, this.feed.delay);
  }
}

new Hall().start();
