// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * One game as spectators step through it: its plies, the position after each, the
 * time spent per move, how it ended, and the tags of its PGN (docs/viewer.md).
 *
 * Pure: no DOM, no sockets, no clock reads. A board is a BoardState as the feed model
 * (model.js) keeps it; the positions are computed here from the plies' UCI moves and
 * SAN, so a page can show any position of the game without a chess library.
 */

export const START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/**
 * The plies of a game, numbered as on a score sheet:
 * `[{ply, number, color, san, uci, clock, emt}]`, `ply` counting from 1 in this game.
 * @param {string} startFen the position the game started from (its PGN's FEN tag).
 */
export function plies(moves, startFen = START_FEN) {
  const fields = String(startFen || START_FEN).split(" ");
  const fullmove = Number.parseInt(fields[5], 10);
  const blackFirst = fields[1] === "b";
  const first = (Number.isInteger(fullmove) && fullmove > 0 ? fullmove - 1 : 0) * 2 + (blackFirst ? 1 : 0);
  return moves.map((move, index) => {
    const absolute = first + index;
    return {
      ply: index + 1,
      number: Math.floor(absolute / 2) + 1,
      color: absolute % 2 === 0 ? "white" : "black",
      san: move.san,
      uci: move.uci,
      clock: typeof move.clock === "number" ? move.clock : null,
      emt: typeof move.emt === "number" ? move.emt : null,
    };
  });
}

/** `[{number, white, black}]` rows of a move list, from `plies()` (null: no ply there). */
export function moveRows(list) {
  const rows = [];
  for (const ply of list) {
    if (ply.color === "white" || rows.length === 0) rows.push({ number: ply.number, white: null, black: null });
    rows[rows.length - 1][ply.color] = ply;
  }
  return rows;
}

// -- positions --------------------------------------------------------------------------

const FILES = "abcdefgh";

/** A FEN's piece placement as a map square → piece letter ("P" white pawn, "k" black king). */
export function readPlacement(fen) {
  const squares = new Map();
  const rows = String(fen || START_FEN).split(" ")[0].split("/");
  rows.forEach((row, index) => {
    const rank = 8 - index;
    let file = 0;
    for (const char of row) {
      if (/[1-8]/.test(char)) file += Number(char);
      else {
        squares.set(`${FILES[file]}${rank}`, char);
        file += 1;
      }
    }
  });
  return squares;
}

/** The placement field of a FEN from a map square → piece letter. */
export function writePlacement(squares) {
  const rows = [];
  for (let rank = 8; rank >= 1; rank -= 1) {
    let row = "";
    let empty = 0;
    for (const file of FILES) {
      const piece = squares.get(`${file}${rank}`);
      if (piece === undefined) empty += 1;
      else {
        row += (empty > 0 ? String(empty) : "") + piece;
        empty = 0;
      }
    }
    rows.push(row + (empty > 0 ? String(empty) : ""));
  }
  return rows.join("/");
}

const isWhite = (piece) => piece === piece.toUpperCase();

/** Castling: the king to the g- or c-file, the rook beside it (Chess960 too). */
function castle(squares, uci, san, king) {
  const from = uci.slice(0, 2);
  const rank = from[1];
  const long = san.startsWith("O-O-O");
  const target = uci.slice(2, 4);
  const ownRook = squares.get(target);
  // Chess960 (and python-chess's raw moves) name the rook's square; else the corner rook.
  const rookFrom = ownRook !== undefined && ownRook.toLowerCase() === "r" && isWhite(ownRook) === isWhite(king)
    ? target
    : `${long ? "a" : "h"}${rank}`;
  const rook = squares.get(rookFrom);
  squares.delete(from);
  squares.delete(rookFrom);
  squares.set(`${long ? "c" : "g"}${rank}`, king);
  if (rook !== undefined) squares.set(`${long ? "d" : "f"}${rank}`, rook);
}

/** Play one ply (UCI and SAN) on a placement map, in place. */
export function playOn(squares, uci, san) {
  if (typeof uci !== "string" || uci.length < 4) return;
  const from = uci.slice(0, 2);
  const to = uci.slice(2, 4);
  const piece = squares.get(from);
  if (piece === undefined) return;
  if (piece.toLowerCase() === "k" && String(san).startsWith("O-O")) {
    castle(squares, uci, String(san), piece);
    return;
  }
  if (piece.toLowerCase() === "p" && from[0] !== to[0] && !squares.has(to)) {
    squares.delete(`${to[0]}${from[1]}`); // en passant: the pawn passed beside
  }
  squares.delete(from);
  const promotion = uci[4];
  squares.set(to, promotion ? (isWhite(piece) ? promotion.toUpperCase() : promotion.toLowerCase()) : piece);
}

/**
 * The placement (the FEN's first field) after each ply: index 0 is the start, index n
 * the position after ply n. Plies that do not fit leave the position as it was.
 */
export function placements(startFen, list) {
  const squares = readPlacement(startFen);
  const out = [writePlacement(squares)];
  for (const ply of list) {
    playOn(squares, ply.uci, ply.san);
    out.push(writePlacement(squares));
  }
  return out;
}

// -- words ------------------------------------------------------------------------------

/** Time spent as the move list shows it: "12s", "3m05s", "1h02m". */
export function spentText(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "";
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, "0")}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, "0")}m`;
}

const FORFEITS = { "+-": "White wins by forfeit", "-+": "Black wins by forfeit", "--": "double forfeit" };

/**
 * How a game ended, in words: "checkmate", "time forfeit", "draw", "resignation", a
 * forfeit; "" while it goes on. `termination` is the PGN's Termination tag, `loserClock`
 * the last reading of the losing side's clock in seconds (0: its flag fell).
 */
export function endingText(result, termination, lastSan, loserClock = null) {
  if (!result || result === "*") return "";
  if (Object.hasOwn(FORFEITS, result)) return FORFEITS[result];
  const term = String(termination || "").toLowerCase();
  if (term === "time forfeit") return "time forfeit";
  if (term && term !== "normal") return term;
  if (typeof lastSan === "string" && lastSan.endsWith("#")) return "checkmate";
  if (result === "1/2-1/2") return "draw";
  if (typeof loserClock === "number" && loserClock <= 0) return "time forfeit";
  return "resignation";
}

/**
 * The losing side's clock in seconds: the board's last reading, else the PGN's
 * WhiteClock or BlackClock tag ("0:00:00"); null for a draw, or when neither says.
 */
export function loserClock(result, board, tags) {
  const loser = { "1-0": "black", "0-1": "white" }[result];
  if (loser === undefined) return null;
  if (typeof board[`${loser}_clock`] === "number") return board[`${loser}_clock`];
  const tag = /^(\d+):(\d\d):(\d\d)$/.exec(tags[loser === "white" ? "WhiteClock" : "BlackClock"] ?? "");
  return tag === null ? null : Number(tag[1]) * 3600 + Number(tag[2]) * 60 + Number(tag[3]);
}

/** The tags of a PGN text (the first game's): `{White: "...", FEN: "...", ...}`. */
export function pgnTags(pgn) {
  const tags = {};
  for (const line of String(pgn || "").split("\n")) {
    const match = /^\[([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\]\s*$/.exec(line.trim());
    if (match === null) {
      if (line.trim() !== "" && Object.keys(tags).length > 0) break; // the movetext
      continue;
    }
    tags[match[1]] = match[2].replace(/\\(["\\])/g, "$1");
  }
  return tags;
}

/** A game's URL fragment: `#board-3` live, `#round-2-board-3` (`@Section` when needed). */
export function gameHash(game) {
  if (game.round === null || game.round === undefined) return `#board-${game.board}`;
  const section = game.section ? `@${encodeURIComponent(game.section)}` : "";
  return `#round-${game.round}-board-${game.board}${section}`;
}

/** The inverse of `gameHash`: `{board, round, section}` or null. */
export function parseGameHash(hash) {
  const live = /^#board-(\d+)$/.exec(hash);
  if (live !== null) return { board: Number(live[1]), round: null, section: null };
  const past = /^#round-(\d+)-board-(\d+)(?:@(.*))?$/.exec(hash);
  if (past === null) return null;
  let section = null;
  if (past[3] !== undefined) {
    try {
      section = decodeURIComponent(past[3]);
    } catch {
      return null;
    }
  }
  return { board: Number(past[2]), round: Number(past[1]), section };
}
