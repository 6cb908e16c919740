// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The game view in the viewer's dialog: one game, live or of a past round, to step
 * through (docs/viewer.md). The board with coordinates, last-move highlight and flip;
 * the move list with each mover's clock ([%clk]) and the time spent; the players with
 * title, federation and rating; the result and how it ended; the game's PGN.
 *
 * Keys: ← → one ply, Home the start, End the last ply and following the live game
 * again, F flips the board. A click on a move goes to it.
 */

import { BoardView, el } from "./boardview.js";
import {
  START_FEN,
  endingText,
  loserClock,
  moveRows,
  pgnTags,
  placements,
  plies,
  spentText,
} from "./game.js";
import { evaluationText, hasScore, samePosition, whiteShare } from "./evaluation.js";
import { formatClock, resultText, statusShown, statusText } from "./model.js";

/** The board as it stood after `ply` plies: its position, last move and clocks then. */
function boardAt(board, list, shapes, ply, startFen) {
  if (ply >= list.length) return board;
  const clocks = { white: null, black: null };
  for (const item of list.slice(0, ply)) if (item.clock !== null) clocks[item.color] = item.clock;
  const last = ply > 0 ? list[ply - 1] : null;
  const startTurn = String(startFen).split(" ")[1] === "b" ? "b" : "w";
  const turn = last === null ? startTurn : last.color === "white" ? "b" : "w";
  return {
    ...board,
    fen: `${shapes[ply]} ${turn}`,
    last_move: last === null ? null : last.uci,
    white_clock: clocks.white,
    black_clock: clocks.black,
    running: null,
    clock_at: null,
  };
}

function moveCell(item, current) {
  const cell = el("td", "ply");
  if (item === null) return cell;
  cell.dataset.ply = String(item.ply);
  cell.tabIndex = -1;
  cell.classList.toggle("current", current);
  cell.append(el("span", "san", item.san));
  cell.append(el("span", "clk", item.clock === null ? "" : formatClock(item.clock)));
  cell.append(el("span", "emt", spentText(item.emt)));
  return cell;
}

export class GameView {
  /**
   * @param {HTMLDialogElement} dialog the page's `#detail` dialog.
   * @param {{players: (section: string, name: string) => any, refresh?: (game: any) => void}} sources
   *   `players` gives a player's title and federation (null when unknown); `refresh`
   *   fetches the open live game's PGN again and hands it to `setPgn`.
   */
  constructor(dialog, sources) {
    this.dialog = dialog;
    this.sources = sources;
    this.view = null;
    this.game = null; // {board, round, section}: what is shown
    this.board = null;
    this.tags = {};
    this.list = [];
    this.shapes = [];
    this.ply = 0;
    this.following = true;
    this.parts = {
      title: dialog.querySelector("h2"),
      status: dialog.querySelector(".status"),
      result: dialog.querySelector(".result"),
      pgn: dialog.querySelector("a.pgn"),
      ending: dialog.querySelector(".ending"),
      tbody: dialog.querySelector("table.moves tbody"),
      box: dialog.querySelector(".moves-box"),
      live: dialog.querySelector("button.live"),
      bar: dialog.querySelector(".eval-bar"),
      black: dialog.querySelector(".eval-black"),
      line: dialog.querySelector(".eval-line"),
    };
    this.evaluation = null; // the live board's latest evaluation (the feed's `eval`)
    dialog.querySelector("nav.steps").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-step]");
      if (button !== null) this.step(button.dataset.step);
    });
    this.parts.tbody.addEventListener("click", (event) => {
      const cell = event.target.closest("td.ply[data-ply]");
      if (cell !== null) this.goTo(Number(cell.dataset.ply));
    });
    // on the document: a redraw may take the focus out of the dialog (a removed cell)
    document.addEventListener("keydown", (event) => {
      if (this.dialog.open) this.key(event);
    });
    this.movesKey = "";
    this.refreshedFor = ""; // the board's FEN the PGN was fetched again for
  }

  /** Whether the view shows the live game of board `number`. */
  showsLive(number) {
    return this.game !== null && this.game.round === null && this.game.board === number;
  }

  /**
   * Open a game: `game` is `{board, round, section}` (round null: the live game), `board`
   * its BoardState, `pgn` its PGN text (tags: start position, titles, termination).
   */
  open(game, board, pgn) {
    this.view?.destroy();
    this.game = game;
    this.tags = pgnTags(pgn);
    this.following = true;
    this.dialog.dataset.board = String(game.board);
    this.dialog.dataset.round = game.round === null ? "live" : String(game.round);
    const where = game.round === null ? "" : ` · Round ${game.round}`;
    this.parts.title.textContent = `Board ${game.board}${where}`;
    this.parts.live.hidden = game.round !== null;
    this.parts.pgn.href = pgnUrl(game);
    this.parts.pgn.download = game.round === null ? `board-${game.board}.pgn` : `round-${game.round}-board-${game.board}.pgn`;
    this.view = new BoardView(this.dialog.querySelector(".detail-view"), { coordinates: true });
    this.movesKey = "";
    this.update(board);
  }

  /** Tags arrived later (the PGN is fetched after the feed's state is drawn). */
  setPgn(pgn) {
    this.tags = pgnTags(pgn);
    this.movesKey = ""; // the start position may number the moves differently
    if (this.board !== null) this.update(this.board);
  }

  get startFen() {
    return this.tags.FEN || START_FEN;
  }

  /** The game changed (a live board's new move, clock, result): redraw, keep the ply. */
  update(board) {
    this.board = board;
    this.list = plies(board.moves, this.startFen);
    this.shapes = placements(this.startFen, this.list);
    this.checkStart(board);
    if (this.following || this.ply > this.list.length) this.ply = this.list.length;
    const movesKey = JSON.stringify(board.moves);
    if (movesKey !== this.movesKey) this.drawMoves(); // not for a clock or a status
    this.movesKey = movesKey;
    this.drawPosition();
  }

  /**
   * A live game whose moves no longer lead from the tags' start to the board (an arbiter
   * accepted the board's position while the game was open: the game goes on from it,
   * its moves numbered from there): its PGN is fetched again, once per position, for
   * the new start.
   */
  checkStart(board) {
    if (this.game?.round !== null || !board.fen || this.sources.refresh === undefined) return;
    const reached = this.shapes[this.shapes.length - 1];
    if (reached === String(board.fen).split(" ")[0] || this.refreshedFor === board.fen) return;
    this.refreshedFor = board.fen;
    this.sources.refresh(this.game);
  }

  close() {
    this.refreshedFor = "";
    this.movesKey = "";
    this.view?.destroy();
    this.view = null;
    this.game = null;
    this.board = null;
    this.evaluation = null;
    delete this.dialog.dataset.board;
    delete this.dialog.dataset.round;
  }

  tick(serverNow, delay) {
    this.view?.tick(serverNow, delay);
  }

  // -- stepping -------------------------------------------------------------------------

  step(what) {
    const last = this.list.length;
    const target = { start: 0, back: this.ply - 1, forward: this.ply + 1, end: last }[what];
    if (what === "flip") return this.flip();
    if (what === "live") return this.goTo(last);
    if (target !== undefined) this.goTo(target);
  }

  goTo(ply) {
    const last = this.list.length;
    this.ply = Math.max(0, Math.min(last, ply));
    this.following = this.ply === last;
    this.drawPosition();
    this.markCurrent();
  }

  flip() {
    this.view?.flip();
    this.dialog.dataset.orientation = this.view?.flipped ? "black" : "white";
  }

  key(event) {
    if (event.altKey || event.ctrlKey || event.metaKey || this.game === null) return;
    const steps = { ArrowLeft: "back", ArrowRight: "forward", Home: "start", End: "end", f: "flip", F: "flip" };
    const what = steps[event.key];
    if (what === undefined) return;
    event.preventDefault();
    this.step(what);
  }

  // -- drawing --------------------------------------------------------------------------

  drawPosition() {
    const board = this.board;
    const shown = boardAt(board, this.list, this.shapes, this.ply, this.startFen);
    const players = {};
    for (const color of ["white", "black"]) {
      const known = this.sources.players(board.section, board[color]) ?? {};
      const tagged = this.tags[color === "white" ? "WhiteTitle" : "BlackTitle"];
      players[color] = { title: known.title || tagged || "", federation: known.federation || "" };
    }
    this.view.update(shown, players);
    this.drawEvaluation(shown.fen);
    this.parts.status.textContent = this.game.round === null ? statusText(board.status) : "";
    this.parts.status.dataset.status = board.status;
    this.parts.status.hidden = this.game.round !== null || !statusShown(board);
    this.parts.result.textContent = resultText(board.result);
    this.parts.result.dataset.result = board.result;
    const provisional = board.result !== "*" && !board.result_final;
    this.parts.result.classList.toggle("provisional", provisional);
    this.parts.result.title = provisional ? "provisional: not confirmed by the arbiter yet" : "";
    const lastSan = this.list.length > 0 ? this.list[this.list.length - 1].san : "";
    const lost = loserClock(board.result, board, this.tags);
    this.parts.ending.textContent = endingText(board.result, this.tags.Termination, lastSan, lost);
    this.dialog.dataset.ply = String(this.ply);
    this.dialog.dataset.following = String(this.following);
    this.parts.live.classList.toggle("on", this.following);
    this.parts.live.disabled = this.following;
  }

  /**
   * The bar and the line: for the live game, when the position shown is the one
   * evaluated, or (dimmed) an earlier one while following the game and the engine is on
   * the new one; hidden otherwise, and when there is no evaluation.
   */
  drawEvaluation(fen) {
    const evaluation = this.evaluation;
    const current = hasScore(evaluation) && samePosition(evaluation.fen, fen);
    // a forfeit without moves: no game was played, its start position is nobody's
    const forfeit = ["+-", "-+", "--"].includes(this.board?.result) && this.list.length === 0;
    const shown = this.game?.round === null && !forfeit && hasScore(evaluation) && (current || this.following);
    this.parts.bar.hidden = !shown;
    this.parts.line.hidden = !shown;
    this.dialog.dataset.evaluation = shown ? (current ? "current" : "stale") : "none";
    if (!shown) return;
    this.parts.bar.classList.toggle("stale", !current);
    this.parts.line.classList.toggle("stale", !current);
    this.parts.black.style.height = `${(100 * (1 - whiteShare(evaluation))).toFixed(1)}%`;
    this.parts.line.textContent = evaluationText(evaluation);
  }

  drawMoves() {
    const rows = moveRows(this.list);
    this.parts.tbody.replaceChildren(
      ...rows.map((row) => {
        const tr = el("tr");
        tr.append(el("th", "", `${row.number}.`));
        for (const color of ["white", "black"]) {
          const item = row[color];
          tr.append(moveCell(item, item !== null && item.ply === this.ply));
        }
        return tr;
      }),
    );
    if (this.following) this.parts.box.scrollTop = this.parts.box.scrollHeight;
  }

  markCurrent() {
    for (const cell of this.parts.tbody.querySelectorAll("td.ply.current")) cell.classList.remove("current");
    const cell = this.parts.tbody.querySelector(`td.ply[data-ply="${this.ply}"]`);
    if (cell === null) return;
    cell.classList.add("current");
    cell.scrollIntoView({ block: "nearest" });
  }
}

/** Where a game's PGN is served: `/board/N.pgn` live, `/round/R/N.pgn` for a past round. */
export function pgnUrl(game) {
  if (game.round === null) return `/board/${game.board}.pgn`;
  const section = game.section ? `?section=${encodeURIComponent(game.section)}` : "";
  return `/round/${game.round}/${game.board}.pgn${section}`;
}

/** Where a past game's BoardState is served (JSON, with its PGN). */
export function gameJsonUrl(game) {
  const section = game.section ? `?section=${encodeURIComponent(game.section)}` : "";
  return `/round/${game.round}/${game.board}.json${section}`;
}
