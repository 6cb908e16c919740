// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The arbiters' page at `/arbiter` (docs/viewer.md): asks for the token, connects to
 * `ws://host/ws/arbiter` with {"type":"auth","token":…}, shows the alerts live and the
 * boards with their result controls, sends the commands of docs/broadcast.md
 * (ack_alert, set_result, confirm_result, rebuild_from_memory, accept_position,
 * choose_line, set_clocks, next_round) and shows each reply. The channel is always live: no public delay here.
 */

import { AlertList, clockTime } from "./alerts.js";
import { el } from "./boardview.js";
import {
  Action,
  LOW_BATTERY,
  batteryText,
  FeedState,
  formatClock,
  playerText,
  resultText,
  shownClocks,
  socketUrl,
  recoveredText,
  statusText,
} from "./model.js";
import { ReconnectingSocket, State, stateText } from "./socket.js";

const TOKEN_KEY = "dgtcast.arbiterToken";
const POLICY_VIOLATION = 1008; // the server refused the token (docs/broadcast.md)
const TICK_MS = 500;

/** Results an arbiter may set (broadcast/feed/messages.py RESULTS; forfeits: docs/pairing.md, "Result codes"). */
const RESULT_CHOICES = [
  ["1-0", "1-0"],
  ["0-1", "0-1"],
  ["1/2-1/2", "½-½"],
  ["+-", "+- White wins by forfeit"],
  ["-+", "-+ Black wins by forfeit"],
  ["--", "-- double forfeit"],
  ["*", "* no result (clear)"],
];

function button(className, text, title) {
  const node = el("button", className, text);
  node.type = "button";
  node.title = title;
  return node;
}

function resultSelect(number) {
  const select = el("select", "result-choice");
  select.setAttribute("aria-label", `Result for board ${number}`);
  const prompt = el("option", "", "result…");
  prompt.value = "";
  select.append(prompt);
  for (const [value, label] of RESULT_CHOICES) {
    const option = el("option", "", label);
    option.value = value;
    select.append(option);
  }
  return select;
}

/** A reply in words: "ok", "ok: set 1, 2", or the daemon's reason. */
export function replyText(message) {
  if (message.type !== "ok") return message.reason || "error";
  const set = message.details?.set;
  if (Array.isArray(set)) return `ok: clocks set on ${set.length ? set.join(", ") : "no board"}`;
  const sections = message.details?.sections;
  if (Array.isArray(sections)) {
    const moved = sections.map((s) => `${s.section ? `${s.section} ` : ""}round ${s.round}`);
    return `ok: ${moved.join(", ")}`;
  }
  if (message.details?.reading !== undefined) return "ok: reading the board's memory again";
  return "ok";
}

class BoardRow {
  constructor(number, page) {
    this.number = number;
    this.tr = el("tr");
    this.tr.dataset.board = String(number);
    this.white = el("span", "name");
    this.black = el("span", "name");
    this.clocks = { white: el("span", "clock"), black: el("span", "clock") };
    this.status = el("span", "status");
    this.result = el("span", "result");
    this.final = el("span", "final");
    this.choice = resultSelect(number);
    this.set = button("set-result", "Set result", "Enter this board's result (set_result)");
    this.confirm = button("confirm-result", "Confirm", "Make the provisional result final (confirm_result)");
    this.rebuild = button(
      "rebuild-from-memory",
      "Rebuild from memory",
      "Read the board's memory again now and recover the moves played since the last agreed position (rebuild_from_memory)",
    );
    this.accept = button(
      "accept-position",
      "Accept position",
      "The game goes on from the position on the board (accept_position)",
    );
    this.reply = el("p", "reply");
    this.board = null;
    const players = el("td", "players");
    const whiteLine = el("div");
    whiteLine.append(el("span", "swatch white"), " ", this.white, this.clocks.white);
    const blackLine = el("div");
    blackLine.append(el("span", "swatch black"), " ", this.black, this.clocks.black);
    players.append(whiteLine, blackLine);
    const controls = el("div", "controls");
    controls.append(this.choice, this.set, this.confirm, this.rebuild, this.accept);
    const commands = el("td", "commands");
    commands.append(controls, this.reply);
    const resultCell = el("td", "result-cell");
    resultCell.append(this.result, " ", this.final);
    const statusCell = el("td", "status-cell");
    this.recovered = el("span", "recovered");
    this.battery = el("span", "battery");
    statusCell.append(this.status, this.recovered, this.battery);
    this.tr.append(el("td", "number", String(number)), players, statusCell, resultCell, commands);
    this.choice.addEventListener("change", () => this.enable());
    this.set.addEventListener("click", () => page.setResult(this, this.choice.value));
    this.confirm.addEventListener("click", () => page.boardCommand(this, "confirm_result", "Confirm result"));
    this.rebuild.addEventListener("click", () =>
      page.boardCommand(this, "rebuild_from_memory", "Rebuild from memory"),
    );
    this.accept.addEventListener("click", () =>
      page.boardCommand(this, "accept_position", "Accept position"),
    );
  }

  update(board) {
    this.board = board;
    this.white.textContent = playerText(board.white, board.white_elo);
    this.black.textContent = playerText(board.black, board.black_elo);
    this.status.textContent = statusText(board.status);
    this.status.dataset.status = board.status;
    this.status.title = recoveredText(board.recovered_plies);
    this.recovered.textContent = recoveredText(board.recovered_plies);
    const percent = board.battery ?? null;
    const charging = Boolean(board.battery_charging);
    this.battery.textContent = batteryText(percent, charging);
    this.battery.classList.toggle("low", percent !== null && percent < LOW_BATTERY && !charging);
    this.tr.dataset.status = board.status;
    this.result.textContent = board.result === "*" ? "*" : resultText(board.result);
    this.result.dataset.result = board.result;
    this.final.textContent = board.result === "*" ? "" : board.result_final ? "final" : "provisional";
    for (const color of ["white", "black"]) {
      this.clocks[color].classList.toggle("running", board.running === color);
    }
    this.enable();
  }

  enable() {
    const board = this.board;
    this.set.disabled = this.choice.value === "";
    this.confirm.disabled = board === null || board.result === "*" || board.result_final;
    const outOfSync = board !== null && board.status === "out_of_sync";
    this.rebuild.disabled = !outOfSync;
    this.accept.disabled = !outOfSync;
  }

  tick(serverNow) {
    if (this.board === null) return;
    const times = shownClocks(this.board, serverNow, 0);
    for (const color of ["white", "black"]) {
      this.clocks[color].textContent = times[color] === null ? "" : formatClock(times[color]);
    }
  }

  showReply(reply) {
    this.reply.className = `reply ${reply.kind}`;
    this.reply.textContent = reply.text;
  }
}

/** The token in an address's fragment (`#token=…`), or "". */
export function tokenInAddress(hash) {
  return new URLSearchParams(hash.replace(/^#/, "")).get("token") || "";
}

class ArbiterPage {
  constructor() {
    this.feed = new FeedState();
    this.rows = new Map();
    this.pending = new Map();
    this.nextRef = 1;
    this.token = "";
    this.authenticated = false;
    this.alerts = new AlertList(
      document.getElementById("alerts"),
      document.getElementById("resolved-alerts"),
      (alert) => this.acknowledge(alert),
      (alert, line) => this.chooseLine(alert, line),
    );
    this.socket = new ReconnectingSocket({
      url: () => socketUrl(location, "/ws/arbiter", null),
      onOpen: (ws) => ws.send(JSON.stringify({ type: "auth", token: this.token })),
      onMessage: (message) => this.receive(message),
      onState: (state, detail) => this.showConnection(state, detail),
    });
  }

  start() {
    const form = document.getElementById("login");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const token = document.getElementById("token").value;
      if (token === "") return;
      sessionStorage.setItem(TOKEN_KEY, token);
      this.connect(token);
    });
    document.getElementById("logout").addEventListener("click", () => this.forget(""));
    document.getElementById("set-clocks").addEventListener("click", () => this.setClocks());
    document.getElementById("next-round").addEventListener("click", () => this.nextRound());
    window.addEventListener("online", () => this.socket.retrySoon());
    setInterval(() => this.tick(), TICK_MS);
    const given = tokenInAddress(location.hash);
    if (given) {
      // the daemon's own token, printed by `dgtcast run` (docs/configuration.md): kept
      // like a typed one, and taken out of the address bar
      sessionStorage.setItem(TOKEN_KEY, given);
      history.replaceState(null, "", location.pathname + location.search);
    }
    const saved = sessionStorage.getItem(TOKEN_KEY);
    if (saved) this.connect(saved);
    else this.showLogin("");
  }

  connect(token) {
    this.token = token;
    this.authenticated = false;
    document.getElementById("login-error").textContent = "";
    this.socket.start();
  }

  /** Stop, drop the token and ask for it again, saying why. */
  forget(reason) {
    this.socket.stop(reason);
    sessionStorage.removeItem(TOKEN_KEY);
    this.authenticated = false;
    this.showLogin(reason);
  }

  showLogin(reason) {
    document.getElementById("console").hidden = true;
    document.getElementById("logout").hidden = true;
    const form = document.getElementById("login");
    form.hidden = false;
    document.getElementById("login-error").textContent = reason;
    const input = document.getElementById("token");
    input.value = "";
    input.focus();
  }

  showConsole() {
    document.getElementById("login").hidden = true;
    document.getElementById("console").hidden = false;
    document.getElementById("logout").hidden = false;
  }

  showConnection(state, detail) {
    const shown = document.getElementById("connection");
    shown.dataset.state = state;
    document.body.dataset.connection = state;
    shown.textContent = stateText(state, detail, "connected");
    if (state === State.WAITING && detail.code === POLICY_VIOLATION && !this.authenticated) {
      this.forget(detail.reason || "the server refused the token");
    } else if (state === State.WAITING) {
      this.authenticated = false;
      this.dropPending();
    }
  }

  // -- what the server sends ---------------------------------------------------------

  receive(message) {
    switch (message.type) {
      case "snapshot":
        return this.receiveSnapshot(message);
      case "alert":
        this.alerts.receiveAlert(message);
        return this.countAlerts();
      case "ok":
      case "error":
        return this.authenticated ? this.receiveReply(message) : this.forget(message.reason);
      default:
        return this.receiveEvent(message);
    }
  }

  receiveSnapshot(snapshot) {
    this.authenticated = true;
    this.feed.receive(snapshot, Date.now() / 1000);
    this.alerts.receiveSnapshot(snapshot.alerts || [], snapshot.resolved || []);
    this.showConsole();
    this.layout();
    this.countAlerts();
  }

  receiveEvent(message) {
    const outcome = this.feed.receive(message, Date.now() / 1000);
    if (outcome.action === Action.GAP || outcome.action === Action.RESYNC) {
      this.socket.restart(); // the channel has no resume: a new connection, a new snapshot
    } else if (outcome.action === Action.CHANGED) {
      const row = this.rows.get(outcome.board);
      if (row === undefined) this.layout();
      else row.update(this.feed.boards.get(outcome.board));
    }
    document.body.dataset.seq = String(this.feed.seq);
  }

  layout() {
    const numbers = [...this.feed.boards.keys()].sort((a, b) => a - b);
    for (const number of numbers) {
      if (!this.rows.has(number)) this.rows.set(number, new BoardRow(number, this));
      this.rows.get(number).update(this.feed.boards.get(number));
    }
    document.getElementById("board-rows").replaceChildren(...numbers.map((n) => this.rows.get(n).tr));
    document.body.dataset.seq = String(this.feed.seq);
    this.listSections();
    this.tick();
  }

  /** The sections of the boards, for "Next round" (shown when there are several). */
  listSections() {
    const names = [...new Set([...this.feed.boards.values()].map((b) => b.section || ""))].sort();
    const select = document.getElementById("next-round-section");
    const options = [el("option", "", "every section")];
    options[0].value = "";
    for (const name of names.filter((n) => n !== "")) {
      const option = el("option", "", name);
      option.value = name;
      options.push(option);
    }
    const chosen = select.value;
    select.replaceChildren(...options);
    select.value = names.includes(chosen) ? chosen : "";
    select.hidden = names.length < 2;
  }

  countAlerts() {
    const open = this.alerts.openCount();
    const unseen = this.alerts.unseenCount();
    const seen = open - unseen;
    const count = open ? `${open} open${seen ? ` (${seen} acknowledged)` : ""}` : "";
    document.getElementById("alert-count").textContent = count;
    document.getElementById("no-alerts").hidden = open > 0;
    const resolved = this.alerts.resolved().length;
    document.getElementById("resolved-count").textContent = resolved ? String(resolved) : "";
    document.getElementById("resolved-panel").hidden = resolved === 0;
  }

  tick() {
    const now = this.feed.serverNow(Date.now() / 1000);
    for (const row of this.rows.values()) row.tick(now);
    this.countAlerts();
  }

  // -- commands ----------------------------------------------------------------------

  /**
   * Send one command with a fresh `ref`; `show` gets {kind, text} now ("pending") and
   * again when the answer with that `ref` comes.
   */
  command(message, label, show) {
    const ref = `c${this.nextRef++}`;
    if (!this.socket.send({ ...message, ref })) {
      show({ kind: "error", text: "not connected" });
      this.log("error", label, "not connected");
      return;
    }
    this.pending.set(ref, { label, show });
    show({ kind: "pending", text: "sent…" });
  }

  receiveReply(message) {
    const entry = this.pending.get(message.ref);
    this.pending.delete(message.ref);
    const kind = message.type === "ok" ? "ok" : "error";
    const text = replyText(message);
    entry?.show({ kind, text });
    this.log(kind, entry?.label ?? "message", text);
  }

  dropPending() {
    for (const { label, show } of this.pending.values()) {
      const text = "connection lost before the answer: check whether it was done";
      show({ kind: "error", text });
      this.log("error", label, text);
    }
    this.pending.clear();
  }

  log(kind, label, text) {
    const item = el("li", `reply ${kind}`, `${clockTime(Date.now() / 1000)} ${label}: ${text}`);
    document.getElementById("replies").prepend(item);
  }

  acknowledge(alert) {
    const label = `Acknowledge alert ${alert.id} (${alert.kind}, board ${alert.board})`;
    this.command({ type: "ack_alert", id: alert.id }, label, (reply) => {
      this.alerts.showReply(alert.id, reply); // the new version comes as an "alert" message
      this.countAlerts();
    });
  }

  chooseLine(alert, line) {
    const label = `Board ${alert.board}: the moves played are line ${line}`;
    this.command({ type: "choose_line", board: alert.board, line }, label, (reply) => {
      this.alerts.showReply(alert.id, reply);
    });
  }

  setResult(row, result) {
    if (result === "") return;
    const label = `Board ${row.number}: set result ${result}`;
    this.command({ type: "set_result", board: row.number, result }, label, (reply) => row.showReply(reply));
  }

  boardCommand(row, type, words) {
    const label = `Board ${row.number}: ${words.toLowerCase()}`;
    this.command({ type, board: row.number }, label, (reply) => row.showReply(reply));
  }

  nextRound() {
    const section = document.getElementById("next-round-section").value;
    const force = document.getElementById("next-round-force").checked;
    const shown = document.getElementById("next-round-reply");
    const label = `Next round${section ? ` (${section})` : ""}${force ? ", forced" : ""}`;
    this.command({ type: "next_round", section, force }, label, (reply) => {
      shown.className = `reply ${reply.kind}`;
      shown.textContent = reply.text;
      if (reply.kind === "ok") document.getElementById("next-round-force").checked = false;
    });
  }

  setClocks() {
    const shown = document.getElementById("set-clocks-reply");
    this.command({ type: "set_clocks" }, "Set clocks", (reply) => {
      shown.className = `reply ${reply.kind}`;
      shown.textContent = reply.text;
    });
  }
}

new ArbiterPage().start();
