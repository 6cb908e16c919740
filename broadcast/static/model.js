// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The feed model shared by the viewer and the arbiter page (docs/broadcast.md).
 *
 * Pure: no DOM, no sockets, no clock reads. Every time is passed in (epoch seconds).
 * `FeedState.receive(message, localNow)` applies one feed message and says what the
 * page must do next: redraw a board, rebuild the layout, resume after a gap, or start
 * over from a fresh snapshot.
 */

/** What `FeedState.receive` asks of its caller. */
export const Action = Object.freeze({
  SNAPSHOT: "snapshot", // every board replaced: rebuild the page
  CHANGED: "changed", // one board changed: redraw it (`board`, `type`)
  STALE: "stale", // an event already applied (after a resume): nothing to do
  GAP: "gap", // events were lost: send {"type":"resume","since":state.seq}
  RESYNC: "resync", // the event does not fit what we know: reconnect without `since`
  OTHER: "other", // not a feed event (resumed, pong, error, alerts, replies)
});

const MOVE_TYPES = new Set(["move", "correction", "takeback"]);
const BOARD_FIELDS = new Set(["clock", "result", "status", ...MOVE_TYPES]);

/** Boards, the last applied sequence number and the server's clock, as the feed said. */
export class FeedState {
  constructor() {
    /** @type {Map<number, any>} board number → BoardState JSON (docs/broadcast.md) */
    this.boards = new Map();
    /** @type {number | null} last applied `seq`; null until the first snapshot */
    this.seq = null;
    /** Public delay in seconds (0 on the arbiter channel). */
    this.delay = 0;
    /** Server wall clock minus the local one, seconds. */
    this.offset = 0;
    /** Whether `offset` comes from a ping and its pong (better than a snapshot's). */
    this.offsetFromPong = false;
    /** @type {Map<number, any>} board number → its latest evaluation (`eval`, public feed) */
    this.evaluations = new Map();
  }

  /**
   * Apply one feed message.
   * @param {any} message the parsed JSON.
   * @param {number} localNow local wall clock, epoch seconds (for `server_time`).
   * @returns {{action: string, board?: number, type?: string}}
   */
  receive(message, localNow) {
    if (message === null || typeof message !== "object") return { action: Action.OTHER };
    if (message.type === "snapshot") {
      this.applySnapshot(message, localNow);
      return { action: Action.SNAPSHOT };
    }
    if (!Number.isInteger(message.seq) || !Number.isInteger(message.board)) {
      return { action: Action.OTHER };
    }
    return this.applyEvent(message);
  }

  /**
   * Replace everything by a snapshot. Its `server_time` sets the clock offset until a
   * pong gives a better one (the snapshot's ignores how long it took to arrive).
   */
  applySnapshot(snapshot, localNow) {
    this.boards = new Map(snapshot.boards.map((board) => [board.board, board]));
    this.evaluations = new Map((snapshot.evaluations ?? []).map((e) => [e.board, e]));
    this.seq = snapshot.seq;
    this.delay = typeof snapshot.delay === "number" ? snapshot.delay : 0;
    if (typeof snapshot.server_time === "number" && !this.offsetFromPong) {
      this.offset = snapshot.server_time - localNow;
    }
  }

  /**
   * Refine the clock offset with a pong: the server read its clock about halfway
   * between our ping and its answer.
   */
  receivePong(serverTime, sentAt, receivedAt) {
    this.offset = serverTime - (sentAt + receivedAt) / 2;
    this.offsetFromPong = true;
  }

  /** The server's wall clock now, from the local one. */
  serverNow(localNow) {
    return localNow + this.offset;
  }

  /** Apply one numbered event, in order; see `Action` for what the caller does next. */
  applyEvent(event) {
    if (this.seq === null || event.seq <= this.seq) return { action: Action.STALE };
    if (event.seq > this.seq + 1) return { action: Action.GAP };
    if (!applyToBoards(this.boards, event)) return { action: Action.RESYNC };
    if (event.type === "eval") this.evaluations.set(event.board, event.evaluation);
    this.seq = event.seq;
    return { action: Action.CHANGED, board: event.board, type: event.type };
  }
}

/**
 * Apply one event to the boards it names; false when it does not fit (a move event
 * for plies we do not have, or an event for a board we never heard of).
 */
export function applyToBoards(boards, event) {
  if (event.type === "board") {
    boards.set(event.board, event.state);
    return true;
  }
  const board = boards.get(event.board);
  if (board === undefined) return !BOARD_FIELDS.has(event.type);
  if (MOVE_TYPES.has(event.type)) return applyMoves(board, event);
  if (event.type === "clock") {
    for (const name of ["white_clock", "black_clock", "running", "clock_at"]) {
      board[name] = event[name];
    }
  } else if (event.type === "result") {
    board.result = event.result;
    board.result_final = event.result_final;
  } else if (event.type === "status") {
    board.status = event.status;
    board.recovered_plies = event.recovered_plies ?? 0;
    board.battery = event.battery ?? null;
    board.battery_charging = event.battery_charging ?? false;
  }
  return true;
}

/** `move` appends after `ply`, `correction` replaces from `ply`, `takeback` cuts to `ply`. */
function applyMoves(board, event) {
  const known = board.moves.length;
  if (event.type === "move" ? known !== event.ply : known < event.ply) return false;
  const kept = board.moves.slice(0, event.ply);
  board.moves = event.type === "takeback" ? kept : kept.concat(event.moves);
  board.fen = event.fen;
  board.last_move = event.last_move;
  return true;
}

/**
 * The clock times to show now (docs/broadcast.md, "Showing clocks"): the running side
 * counts down from its reading at `clock_at`; behind a public delay the readings are
 * those of `delay` seconds ago, hence `serverNow - delay`.
 * @returns {{white: number | null, black: number | null}} seconds, never below 0.
 */
export function shownClocks(board, serverNow, delay) {
  let elapsed = 0;
  if (typeof board.clock_at === "number") {
    elapsed = Math.max(0, serverNow - delay - board.clock_at);
  }
  return {
    white: countDown(board.white_clock, board.running === "white" ? elapsed : 0),
    black: countDown(board.black_clock, board.running === "black" ? elapsed : 0),
  };
}

function countDown(seconds, elapsed) {
  return typeof seconds === "number" ? Math.max(0, seconds - elapsed) : null;
}

/**
 * A time as a clock shows it: h:mm:ss from an hour on, else m:ss. Rounded up, so a
 * reading of 180 s shows 3:00 until it is over and 0:00 means the flag fell.
 */
export function formatClock(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "–";
  const whole = Math.max(0, Math.ceil(seconds - 0.001));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/**
 * The plies of a board numbered as on a score sheet: `[{number, white, black}]`.
 * The first ply's number and colour come from the FEN after the last move (its side
 * to move and move number), so a game started from a set-up position is right too.
 */
export function numberedMoves(board) {
  const moves = board.moves;
  const fields = String(board.fen || "").split(" ");
  const fullmove = Number.parseInt(fields[5], 10);
  const plyNow = Number.isInteger(fullmove) ? (fullmove - 1) * 2 + (fields[1] === "b" ? 1 : 0) : moves.length;
  const first = Math.max(0, plyNow - moves.length);
  const rows = [];
  moves.forEach((move, index) => {
    const ply = first + index;
    const number = Math.floor(ply / 2) + 1;
    if (ply % 2 === 0 || rows.length === 0) rows.push({ number, white: null, black: null });
    rows[rows.length - 1][ply % 2 === 0 ? "white" : "black"] = move;
  });
  return rows;
}

/** The side to move in a FEN: "white" or "black". */
export function turnOf(fen) {
  return String(fen || "").split(" ")[1] === "b" ? "black" : "white";
}

/** A UCI move as the two squares chessground highlights, or [] for none. */
export function lastMoveSquares(uci) {
  return typeof uci === "string" && uci.length >= 4 ? [uci.slice(0, 2), uci.slice(2, 4)] : [];
}

const RESULT_TEXT = {
  "1-0": "1-0",
  "0-1": "0-1",
  "1/2-1/2": "½-½",
  "+-": "1-0 forfeit",
  "-+": "0-1 forfeit",
  "--": "double forfeit",
  "*": "",
};

/** A result as spectators read it (forfeits are the TRF codes, docs/pairing.md, "Result codes"). */
export function resultText(result) {
  return Object.hasOwn(RESULT_TEXT, result) ? RESULT_TEXT[result] : String(result);
}

const STATUS_TEXT = {
  online: "live",
  offline: "board offline",
  out_of_sync: "out of sync",
  manual: "no e-board",
  waiting: "not started",
  connecting: "connecting",
  catching_up: "catching up",
};

/** "12 plies recovered" (played while the board was out of sight), or "" (issue 11). */
export function recoveredText(plies) {
  if (!plies) return "";
  return `${plies} ${plies === 1 ? "ply" : "plies"} recovered`;
}

/** Below this % a wireless e-board's battery is marked low on the arbiter page. */
export const LOW_BATTERY = 20;

/** "battery 84%" ("… charging"), or "" for a board that never reported one (USB). */
export function batteryText(percent, charging) {
  if (percent === null || percent === undefined) return "";
  return `battery ${percent}%${charging ? " charging" : ""}`;
}

/** A board status in words. */
export function statusText(status) {
  return Object.hasOwn(STATUS_TEXT, status) ? STATUS_TEXT[status] : String(status);
}

/** Whether spectators see the board's status: not "live" beside a game's result. */
export function statusShown(board) {
  return !(board.status === "online" && board.result !== "*");
}

/** "Carlsen, Magnus (2830)", or the name alone. */
export function playerText(name, elo) {
  const shown = name || "?";
  return Number.isInteger(elo) ? `${shown} (${elo})` : shown;
}

/** The feed URL of this page's server: ws(s)://host/ws, resuming after `since`. */
export function socketUrl(location, path, since) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const query = Number.isInteger(since) ? `?since=${since}` : "";
  return `${scheme}://${location.host}${path}${query}`;
}
