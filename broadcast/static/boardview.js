// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * One board drawn for spectators: Black's name and clock, the pieces (chessground,
 * view only, last move highlighted), White's name and clock. Used for the cards of the
 * grid and for the enlarged board.
 */

import { Chessground } from "/vendor/chessground/dist/chessground.min.js";
import { formatClock, lastMoveSquares, resultText, shownClocks, turnOf } from "./model.js";

/** Make an element: `el("span", "clock", "3:00")`. */
export function el(tag, className = "", text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

function playerRow(color) {
  const row = el("div", `player ${color}`);
  row.dataset.color = color;
  const title = el("span", "title");
  const name = el("span", "name");
  const fed = el("span", "fed");
  const elo = el("span", "elo");
  const clock = el("span", "clock", "–");
  clock.dataset.color = color;
  row.append(el("span", `swatch ${color}`), title, name, fed, elo, clock);
  return { row, title, name, fed, elo, clock };
}

/**
 * A round with e-boards on some boards only (the top boards, as regulations often say):
 * `{live, listed}`, the boards with an e-board first as boards, the others listed as a
 * compact table of pairings and results. A round without any e-board lists none.
 */
export function splitLive(boards) {
  const live = boards.filter((board) => board.status !== "manual");
  if (live.length === 0) return { live: boards, listed: [] };
  return { live, listed: boards.filter((board) => board.status === "manual") };
}

/** A table of boards without e-board; `rows` gets each board's row parts by number. */
export function listedTable(boards, rows) {
  const table = el("table", "pairings listed-boards");
  const body = el("tbody");
  for (const board of boards) {
    const row = el("tr", "listed");
    row.dataset.board = String(board.board);
    const parts = {
      row,
      white: el("td", "white"),
      result: el("td", "result"),
      black: el("td", "black"),
    };
    row.append(el("td", "board", String(board.board)), parts.white, parts.result, parts.black);
    body.append(row);
    rows.set(board.board, parts);
  }
  table.append(body);
  return table;
}

/** Fill a listed board's row: its players and result (provisional ones marked). */
export function fillListed(parts, board) {
  parts.white.textContent = board.white || "?";
  parts.black.textContent = board.black || "?";
  parts.result.textContent = board.result === "*" ? "" : resultText(board.result);
  parts.result.dataset.result = board.result;
  parts.result.classList.toggle("provisional", board.result !== "*" && !board.result_final);
}

/** Whether a board is shown as its result instead of a chessboard: no e-board (so no
 * moves to show, only the start position) and a result in. */
export function showsResultCard(board) {
  const moves = Array.isArray(board.moves) ? board.moves.length : 0;
  return board.status === "manual" && moves === 0 && Boolean(board.result) && board.result !== "*";
}

export class BoardView {
  /**
   * @param {HTMLElement} root filled with the players' rows and the board.
   * @param {{coordinates?: boolean}} [options]
   */
  constructor(root, { coordinates = false } = {}) {
    this.root = root;
    this.black = playerRow("black");
    this.white = playerRow("white");
    const box = el("div", "board-box");
    const wrap = el("div", "cg-host");
    // a board without e-board whose result is in: the result, not a start position
    this.card = el("div", "result-card");
    this.card.hidden = true;
    box.append(wrap, this.card);
    this.box = box;
    root.append(this.black.row, box, this.white.row);
    this.ground = Chessground(wrap, {
      viewOnly: true,
      coordinates,
      disableContextMenu: true,
      animation: { enabled: true, duration: 180 },
      drawable: { enabled: false, visible: false },
      highlight: { lastMove: true, check: false },
    });
    this.board = null;
    this.shown = { white: "", black: "" };
    this.flipped = false;
  }

  /**
   * Draw a board state (BoardState JSON of the feed).
   * @param {any} board the state (a game view passes the position it steps to).
   * @param {{white?: any, black?: any}} [players] title and federation of each side.
   */
  update(board, players = {}) {
    this.board = board;
    for (const color of ["white", "black"]) {
      const elo = board[`${color}_elo`];
      const player = players[color] ?? {};
      this[color].name.textContent = board[color] || "?";
      this[color].elo.textContent = Number.isInteger(elo) ? String(elo) : "";
      this[color].title.textContent = player.title || "";
      this[color].fed.textContent = player.federation || "";
    }
    const card = showsResultCard(board);
    this.box.classList.toggle("shows-result", card);
    this.card.hidden = !card;
    if (card) {
      const final = board.result_final ? "" : " (provisional)";
      this.card.replaceChildren(
        el("span", "card-result", resultText(board.result)),
        el("span", "card-note", `no e-board: the arbiter's result${final}`),
      );
    }
    this.ground.set({
      fen: board.fen,
      turnColor: turnOf(board.fen),
      lastMove: lastMoveSquares(board.last_move),
    });
    for (const color of ["white", "black"]) {
      this[color].clock.classList.toggle("running", board.running === color);
    }
  }

  /** Show the clocks as they stand now (server time, public delay). */
  tick(serverNow, delay) {
    if (this.board === null) return;
    const times = shownClocks(this.board, serverNow, delay);
    for (const color of ["white", "black"]) {
      const text = formatClock(times[color]);
      if (text === this.shown[color]) continue;
      this.shown[color] = text;
      const clock = this[color].clock;
      clock.hidden = times[color] === null; // a board without clock readings
      clock.textContent = text;
      clock.classList.toggle("low", times[color] !== null && times[color] < 30);
    }
  }

  /** Turn the board round: the other side at the bottom, its player row too. */
  flip() {
    this.flipped = !this.flipped;
    this.ground.toggleOrientation();
    const [top, bottom] = this.flipped ? [this.white, this.black] : [this.black, this.white];
    const box = this.root.querySelector(".board-box");
    this.root.replaceChildren(top.row, box, bottom.row);
    this.root.dataset.orientation = this.flipped ? "black" : "white";
  }

  destroy() {
    this.ground.destroy();
    this.root.replaceChildren();
  }
}
