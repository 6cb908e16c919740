// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The spectators' page at `/`: every board of the round as a grid, live from
 * `ws://host/ws` (docs/broadcast.md, docs/viewer.md). A click on a board enlarges it
 * with its move list.
 */

import { BoardView, el, fillListed, listedTable, splitLive } from "./boardview.js";
import { gameHash, parseGameHash } from "./game.js";
import { GameView, gameJsonUrl, pgnUrl } from "./gameview.js";
import { Action, FeedState, numberedMoves, resultText, socketUrl, statusShown, statusText } from "./model.js";
import { Panels, fetchJson, fetchText } from "./panels.js";
import { ReconnectingSocket, State, stateText } from "./socket.js";

const TICK_MS = 200;
const PING_MS = 20000; // also keeps idle connections through proxies
const PONG_MS = 10000; // no pong by then: the connection is dead, reconnect

function sectionTitle(boards) {
  const first = boards[0];
  const round = String(first.round || "").split(".")[0];
  const variant = first.variant === "chess960" ? "Chess960" : "";
  return [first.section, round ? `Round ${round}` : "", variant].filter(Boolean).join(" · ");
}

/** "15 min", "90 s": the public delay (docs/broadcast.md, "Public delay"). */
function delayText(seconds) {
  return seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds)} s`;
}

function lastMoveText(board) {
  const rows = numberedMoves(board);
  const row = rows[rows.length - 1];
  if (row === undefined) return "";
  return row.black ? `${row.number}… ${row.black.san}` : `${row.number}. ${row.white.san}`;
}

/** Board number, status and result: the head of a card and of the enlarged board. */
function fillHead(parts, board) {
  parts.status.textContent = statusText(board.status);
  parts.status.dataset.status = board.status;
  parts.status.hidden = !statusShown(board);
  parts.result.textContent = resultText(board.result);
  parts.result.dataset.result = board.result;
  parts.result.classList.toggle("provisional", board.result !== "*" && !board.result_final);
  parts.result.title = board.result_final ? "" : "provisional: not confirmed by the arbiter yet";
}

class Viewer {
  constructor() {
    this.feed = new FeedState();
    /** Board number → its row, for boards without e-board beside live ones (splitLive). */
    this.listed = new Map();
    /** Board number → its card: `{card, view, head, last, body}` (view: null until drawn). */
    this.cards = new Map();
    this.layoutKey = "";
    this.panels = new Panels(this);
    this.resumeAsked = null;
    this.pingAt = null;
    this.pongTimer = null;
    this.main = document.getElementById("boards");
    this.dialog = document.getElementById("detail");
    this.game = new GameView(this.dialog, {
      players: (section, name) => this.panels.player(section, name),
      refresh: (game) => this.refreshPgn(game),
    });
    this.opening = 0; // counts game openings: a late fetch for an older one is dropped
    this.socket = new ReconnectingSocket({
      url: () => socketUrl(location, "/ws", this.feed.seq),
      protocols: ["dgtcast.batch"],
      onMessage: (message) => this.receive(message),
      onState: (state, detail) => this.showConnection(state, detail),
      onOpen: () => this.ping(),
    });
  }

  start() {
    this.dialog.addEventListener("close", () => this.closeDetail());
    this.dialog.addEventListener("click", (event) => {
      if (event.target === this.dialog) this.dialog.close();
    });
    this.dialog.querySelector(".close").addEventListener("click", () => this.dialog.close());
    window.addEventListener("online", () => this.socket.retrySoon());
    window.addEventListener("hashchange", () => this.route());
    setInterval(() => this.tick(), TICK_MS);
    setInterval(() => this.ping(), PING_MS);
    this.socket.start();
    this.route();
  }

  /** Show what the address names: a game (`#board-N`, `#round-R-board-N`), a view. */
  route() {
    const game = parseGameHash(location.hash);
    if (game !== null) return this.openGame(game);
    const view = { "#rounds": "rounds", "#standings": "standings" }[location.hash] ?? "boards";
    if (this.dialog.open) this.dialog.close();
    this.showView(view);
  }

  showView(view) {
    document.body.dataset.view = view;
    for (const name of ["boards", "rounds", "standings"]) {
      document.getElementById(name).hidden = name !== view;
    }
    if (view !== "boards") this.panels.show(view);
  }

  // -- the feed -------------------------------------------------------------------

  receive(message) {
    if (message.type === "pong") return this.receivePong(message);
    if (message.type === "error") return console.warn("dgtcast feed:", message.reason);
    const outcome = this.feed.receive(message, Date.now() / 1000);
    if (outcome.action === Action.SNAPSHOT) {
      this.resumeAsked = null;
      this.layout(true);
    } else if (outcome.action === Action.CHANGED) {
      this.boardChanged(outcome.board, outcome.type);
      this.panels.boardChanged(outcome.board, outcome.type);
    } else if (outcome.action === Action.GAP && this.resumeAsked !== this.feed.seq) {
      this.resumeAsked = this.feed.seq;
      this.socket.send({ type: "resume", since: this.feed.seq });
    } else if (outcome.action === Action.RESYNC) {
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

  receivePong(message) {
    clearTimeout(this.pongTimer);
    this.pongTimer = null;
    if (this.pingAt !== null) this.feed.receivePong(message.server_time, this.pingAt, Date.now() / 1000);
    this.pingAt = null;
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

  // -- the grid -------------------------------------------------------------------

  sections() {
    const groups = new Map();
    for (const board of this.feed.boards.values()) {
      const list = groups.get(board.section) ?? [];
      list.push(board);
      groups.set(board.section, list);
    }
    for (const list of groups.values()) list.sort((a, b) => a.board - b.board);
    return [...groups.values()];
  }

  /** Build the grid again when the boards or their sections changed (or `force`). */
  layout(force) {
    const sections = this.sections();
    const key = JSON.stringify(sections.map((list) => list.map((b) => [b.section, b.round, b.board, b.status === "manual"])));
    if (force || key !== this.layoutKey) {
      this.layoutKey = key;
      for (const { view } of this.cards.values()) view?.destroy();
      this.cards.clear();
      this.listed.clear();
      this.main.replaceChildren(...sections.map((list) => this.section(list)));
      if (sections.length === 0) this.main.append(el("p", "empty", "No boards in this round yet."));
      const delay = this.feed.delay;
      document.getElementById("delay").textContent = delay > 0 ? `delayed by ${delayText(delay)}` : "";
    }
    for (const board of this.feed.boards.values()) this.drawBoard(board.board);
    this.panels.boardChanged(null, "snapshot");
    const wanted = parseGameHash(location.hash);
    if (wanted !== null && wanted.round === null && this.game.game === null) this.openGame(wanted);
  }

  section(boards) {
    const part = el("section", "round-section");
    const title = sectionTitle(boards);
    if (title) part.append(el("h2", "", title));
    const { live, listed } = splitLive(boards);
    const grid = el("div", "grid");
    for (const board of live) grid.append(this.card(board.board));
    part.append(grid);
    if (listed.length > 0) part.append(listedTable(listed, this.listed));
    return part;
  }

  card(number) {
    const card = el("article", "card");
    card.dataset.board = String(number);
    card.tabIndex = 0;
    card.setAttribute("role", "button");
    card.setAttribute("aria-label", `Board ${number}: enlarge`);
    const head = { status: el("span", "status"), result: el("span", "result") };
    const top = el("header", "card-head");
    top.append(el("span", "number", String(number)), head.status, head.result);
    const body = el("div", "view");
    const last = el("footer", "latest-move");
    card.append(top, body, last);
    card.addEventListener("click", () => this.showGame({ board: number, round: null, section: null }));
    card.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      this.showGame({ board: number, round: null, section: null });
    });
    // The board itself is drawn by drawBoard, once the card is in the page and has a size.
    this.cards.set(number, { card, view: null, head, last, body });
    return card;
  }

  boardChanged(number, type) {
    if (type === "board") this.layout(false);
    else this.drawBoard(number);
  }

  drawBoard(number) {
    const board = this.feed.boards.get(number);
    const row = this.listed.get(number);
    if (board !== undefined && row !== undefined) fillListed(row, board);
    const entry = this.cards.get(number);
    if (board === undefined || entry === undefined) return;
    if (entry.view === null) entry.view = new BoardView(entry.body);
    entry.view.update(board);
    fillHead(entry.head, board);
    entry.last.textContent = lastMoveText(board);
    entry.card.dataset.status = board.status;
    this.tickView(entry.view);
    if (this.game.showsLive(number)) {
      this.game.evaluation = this.feed.evaluations.get(number) ?? null;
      this.game.update(board);
      this.tickView(this.game);
    }
  }

  tickView(view) {
    view.tick(this.feed.serverNow(Date.now() / 1000), this.feed.delay);
  }

  tick() {
    const now = this.feed.serverNow(Date.now() / 1000);
    for (const { view } of this.cards.values()) view?.tick(now, this.feed.delay);
    this.game.tick(now, this.feed.delay);
  }

  // -- the game view ----------------------------------------------------------------

  /** Open a game by changing the address (so it can be shared, and Back closes it). */
  showGame(game) {
    const hash = gameHash(game);
    if (location.hash === hash) this.openGame(game);
    else location.hash = hash;
  }

  /** Open the game the address names: a live board from the feed, a past one fetched. */
  async openGame(game) {
    const opening = ++this.opening;
    let board;
    if (game.round === null) {
      board = this.feed.boards.get(game.board);
      if (board === undefined) return; // drawn once the snapshot names it
    } else {
      board = await fetchJson(gameJsonUrl(game));
      if (board === null || opening !== this.opening) return;
    }
    this.game.evaluation = game.round === null ? (this.feed.evaluations.get(game.board) ?? null) : null;
    this.game.open(game, board, board.pgn ?? "");
    if (!this.dialog.open) this.dialog.showModal();
    this.tickView(this.game);
    if (game.round === null) {
      const pgn = await fetchText(pgnUrl(game));
      if (pgn !== null && opening === this.opening && this.game.showsLive(game.board)) this.game.setPgn(pgn);
    }
  }

  /** The open live game's PGN again (its start changed: an accepted position). */
  async refreshPgn(game) {
    const opening = this.opening;
    const pgn = await fetchText(pgnUrl(game));
    if (pgn !== null && opening === this.opening && this.game.showsLive(game.board)) this.game.setPgn(pgn);
  }

  /** Titles and federations arrived (the standings): the open game shows them. */
  playersChanged() {
    if (this.game.board !== null) this.game.update(this.game.board);
  }

  /** The dialog was closed (its button, Escape, a click beside it). */
  closeDetail() {
    if (this.game.game === null) return;
    this.opening += 1;
    this.game.close();
    if (parseGameHash(location.hash) !== null) {
      history.replaceState(null, "", location.pathname + location.search);
      this.route();
    }
  }
}

new Viewer().start();
