// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The spectators' page at `/`: every board of the round as a grid, live from
 * `ws://host/ws` (docs/broadcast.md, docs/viewer.md). A click on a board enlarges it
 * with its move list.
 */

import { BoardView, el } from "./boardview.js";
import {
  Action,
  FeedState,
  formatClock,
  numberedMoves,
  resultText,
  socketUrl,
  statusText,
} from "./model.js";
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

/** "15 min", "90 s": the public delay (tournament-rules.md §5). */
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
  parts.result.textContent = resultText(board.result);
  parts.result.dataset.result = board.result;
  parts.result.classList.toggle("provisional", board.result !== "*" && !board.result_final);
  parts.result.title = board.result_final ? "" : "provisional: not confirmed by the arbiter yet";
}

function moveCell(move, ply, current) {
  const cell = el("td", "ply");
  if (move === null) return cell;
  cell.dataset.ply = String(ply);
  cell.classList.toggle("current", current);
  const clock = move.clock == null ? "" : formatClock(move.clock);
  cell.append(el("span", "san", move.san), el("span", "clk", clock));
  return cell;
}

class Viewer {
  constructor() {
    this.feed = new FeedState();
    /** Board number → its card: `{card, view, head, last, body}` (view: null until drawn). */
    this.cards = new Map();
    this.layoutKey = "";
    this.detail = null;
    this.resumeAsked = null;
    this.pingAt = null;
    this.pongTimer = null;
    this.main = document.getElementById("boards");
    this.dialog = document.getElementById("detail");
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
    setInterval(() => this.tick(), TICK_MS);
    setInterval(() => this.ping(), PING_MS);
    this.socket.start();
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
    const key = JSON.stringify(sections.map((list) => list.map((b) => [b.section, b.round, b.board])));
    if (force || key !== this.layoutKey) {
      this.layoutKey = key;
      for (const { view } of this.cards.values()) view.destroy();
      this.cards.clear();
      this.main.replaceChildren(...sections.map((list) => this.section(list)));
      if (sections.length === 0) this.main.append(el("p", "empty", "No boards in this round yet."));
      const delay = this.feed.delay;
      document.getElementById("delay").textContent = delay > 0 ? `delayed by ${delayText(delay)}` : "";
    }
    for (const board of this.feed.boards.values()) this.drawBoard(board.board);
    this.openFromHash();
  }

  section(boards) {
    const part = el("section", "round-section");
    const title = sectionTitle(boards);
    if (title) part.append(el("h2", "", title));
    const grid = el("div", "grid");
    for (const board of boards) grid.append(this.card(board.board));
    part.append(grid);
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
    card.addEventListener("click", () => this.openDetail(number));
    card.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      this.openDetail(number);
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
    const entry = this.cards.get(number);
    if (board === undefined || entry === undefined) return;
    if (entry.view === null) entry.view = new BoardView(entry.body);
    entry.view.update(board);
    fillHead(entry.head, board);
    entry.last.textContent = lastMoveText(board);
    entry.card.dataset.status = board.status;
    this.tickView(entry.view);
    if (this.detail !== null && this.detail.number === number) {
      this.drawDetail(board);
      this.tickView(this.detail.view);
    }
  }

  tickView(view) {
    view.tick(this.feed.serverNow(Date.now() / 1000), this.feed.delay);
  }

  tick() {
    const now = this.feed.serverNow(Date.now() / 1000);
    for (const { view } of this.cards.values()) view?.tick(now, this.feed.delay);
    this.detail?.view.tick(now, this.feed.delay);
  }

  // -- the enlarged board ------------------------------------------------------------

  openDetail(number) {
    const board = this.feed.boards.get(number);
    if (board === undefined) return;
    this.detail?.view.destroy();
    const dialog = this.dialog;
    dialog.dataset.board = String(number);
    dialog.querySelector("h2").textContent = `Board ${number}`;
    dialog.querySelector("a.pgn").href = `/board/${number}.pgn`;
    if (!dialog.open) dialog.showModal();
    const body = dialog.querySelector(".detail-view");
    const head = { status: dialog.querySelector(".status"), result: dialog.querySelector(".result") };
    this.detail = { number, view: new BoardView(body, { coordinates: true }), head };
    history.replaceState(null, "", `#board-${number}`);
    this.drawDetail(board);
    this.tickView(this.detail.view);
  }

  /** The dialog was closed (its button, Escape, a click beside it). */
  closeDetail() {
    if (this.detail === null) return;
    this.detail.view.destroy();
    this.detail = null;
    delete this.dialog.dataset.board;
    history.replaceState(null, "", location.pathname + location.search);
  }

  openFromHash() {
    const match = /^#board-(\d+)$/.exec(location.hash);
    if (match === null || this.detail !== null) return;
    this.openDetail(Number(match[1]));
  }

  drawDetail(board) {
    const { view, head } = this.detail;
    view.update(board);
    fillHead(head, board);
    const tbody = this.dialog.querySelector("table.moves tbody");
    const rows = numberedMoves(board);
    const lastPly = board.moves.length;
    let ply = 0;
    tbody.replaceChildren(
      ...rows.map((row) => {
        const tr = el("tr");
        tr.append(el("th", "", `${row.number}.`));
        for (const move of [row.white, row.black]) {
          if (move !== null) ply += 1;
          tr.append(moveCell(move, ply, move !== null && ply === lastPly));
        }
        return tr;
      }),
    );
    const box = this.dialog.querySelector(".moves-box");
    box.scrollTop = box.scrollHeight;
  }
}

new Viewer().start();
