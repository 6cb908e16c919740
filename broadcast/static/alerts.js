// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The arbiter page's alert lists (docs/alerts.md, "Life cycle"): the open alerts, newest
 * first, each with its kind, board, time, details, suggested action and an Acknowledge
 * button (an acknowledged alert stays open, marked, while its condition holds); and the
 * resolved ones, most recently resolved first, each saying when, by whom and why.
 * Every message is a whole version of an alert: the latest one replaces the one shown.
 */

import { el } from "./boardview.js";

/** "14:03:22": local time of an epoch-seconds instant. */
export function clockTime(at) {
  const date = new Date(at * 1000);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((part) => String(part).padStart(2, "0"))
    .join(":");
}

/** "board_offline" → "Board offline". */
export function kindText(kind) {
  const words = String(kind).replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function detailValue(key, value) {
  const isTime = key === "since" || key.endsWith("_at");
  if (isTime && typeof value === "number" && value > 1e9) return clockTime(value);
  if (Array.isArray(value)) return value.join(", ");
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  if (key === "color" && typeof value === "string") {
    return value.charAt(0).toUpperCase() + value.slice(1);
  }
  return String(value);
}

/** Yes-or-no details said in words (docs/alerts.md): what is true, what is not. */
const SAID = {
  board_online: ["the e-board answers", "the e-board does not answer"],
  provisional: ["provisional", "final"],
  complete: ["every move recovered", "moves still missing"],
};

/** Detail names in words, where the name alone is not ("default_at": "default time"). */
const NAMES = {
  default_at: "default time",
  board_result: "the board's result",
  board_says: "the board",
  from_ply: "from ply",
  expected_fen: "expected position",
  round_id: "lichess round",
};

/** One detail in words: "default time: 14:05:00", "the e-board answers", "check: yes". */
function detailText(key, value) {
  if (typeof value === "boolean") {
    const said = SAID[key];
    if (said) return value ? said[0] : said[1];
    return `${NAMES[key] || key.replaceAll("_", " ")}: ${value ? "yes" : "no"}`;
  }
  return `${NAMES[key] || key.replaceAll("_", " ")}: ${detailValue(key, value)}`;
}

/** An alert's details in words, "name: value" or a phrase, separated by " · ". */
export function detailsText(details) {
  return Object.entries(details || {})
    .map(([key, value]) => detailText(key, value))
    .join(" · ");
}

/** Resolved alerts kept on the page (the latest; a reconnection brings the server's). */
const KEPT_RESOLVED = 200;

/** The step of an alert's history that resolved it, or undefined while it is open. */
export function resolution(alert) {
  if (alert.state !== "resolved") return undefined;
  return [...(alert.history || [])].reverse().find((step) => step.step === "resolved");
}

/** "14:05:10 acknowledged by arbiter", "14:10:00 resolved by dgtcast: the e-board …". */
export function stepText(step) {
  const note = step.note ? `: ${step.note}` : "";
  return `${clockTime(step.at)} ${step.step} by ${step.by}${note}`;
}

export class AlertList {
  /**
   * @param {HTMLOListElement} list where the open alerts go.
   * @param {HTMLOListElement} resolvedList where the resolved alerts go.
   * @param {(alert: any) => void} acknowledge called by an alert's button.
   * @param {(alert: any, line: number) => void} [choose] called by a candidate line's
   *   button of a gap_ambiguous alert (the arbiter's choose_line, docs/alerts.md).
   */
  constructor(list, resolvedList, acknowledge, choose = () => {}) {
    this.list = list;
    this.resolvedList = resolvedList;
    this.acknowledge = acknowledge;
    this.choose = choose;
    /** @type {Map<number, any>} alert id → its latest version */
    this.alerts = new Map();
    /** @type {Map<number, {kind: string, text: string}>} alert id → last command reply */
    this.replies = new Map();
  }

  /**
   * A (re)connection's snapshot: the open alerts and the last resolved ones. An alert we
   * showed open that is in neither was resolved while we were away (and is forgotten
   * by the server by now): it is marked so.
   */
  receiveSnapshot(open, resolved) {
    const ids = new Set([...open, ...resolved].map((alert) => alert.id));
    for (const alert of this.alerts.values()) {
      if (!ids.has(alert.id) && alert.state !== "resolved") {
        const step = { step: "resolved", at: Date.now() / 1000, by: "dgtcast", note: "while this page was away" };
        this.alerts.set(alert.id, { ...alert, state: "resolved", history: [...(alert.history || []), step] });
      }
    }
    for (const alert of [...resolved, ...open]) {
      this.alerts.set(alert.id, alert);
      if (alert.acknowledged && this.replies.get(alert.id)?.kind === "error") this.replies.delete(alert.id);
    }
    this.forgetStale();
    this.render();
  }

  /** A new version of an alert (raised, updated, acknowledged, resolved). */
  receiveAlert(alert) {
    this.alerts.set(alert.id, alert);
    if (alert.acknowledged && this.replies.get(alert.id)?.kind === "error") this.replies.delete(alert.id);
    this.forgetStale();
    this.render();
  }

  /** Keep the latest KEPT_RESOLVED resolved alerts. */
  forgetStale() {
    const resolved = this.resolved();
    for (const alert of resolved.slice(KEPT_RESOLVED)) {
      this.alerts.delete(alert.id);
      this.replies.delete(alert.id);
    }
  }

  /** Show a command's reply at its alert: `{kind: "ok" | "error" | "pending", text}`. */
  showReply(id, reply) {
    this.replies.set(id, reply);
    this.render();
  }

  open() {
    return [...this.alerts.values()].filter((alert) => alert.state !== "resolved");
  }

  /** The resolved alerts, the most recently resolved first. */
  resolved() {
    const when = (alert) => resolution(alert)?.at ?? alert.at;
    return [...this.alerts.values()]
      .filter((alert) => alert.state === "resolved")
      .sort((a, b) => when(b) - when(a) || b.id - a.id);
  }

  openCount() {
    return this.open().length;
  }

  /** Open alerts no arbiter has acknowledged yet. */
  unseenCount() {
    return this.open().filter((alert) => !alert.acknowledged).length;
  }

  render() {
    const newest = this.open().sort((a, b) => b.at - a.at || b.id - a.id);
    this.list.replaceChildren(...newest.map((alert) => this.item(alert)));
    this.resolvedList.replaceChildren(...this.resolved().map((alert) => this.item(alert)));
  }

  item(alert) {
    const li = el("li", "alert");
    li.dataset.id = String(alert.id);
    li.dataset.kind = alert.kind;
    li.dataset.state = alert.state;
    li.classList.toggle("acknowledged", Boolean(alert.acknowledged));
    li.classList.toggle("resolved", alert.state === "resolved");
    const head = el("div", "alert-head");
    const time = el("time", "time", clockTime(alert.at));
    time.dateTime = new Date(alert.at * 1000).toISOString();
    head.append(el("span", "kind", kindText(alert.kind)), el("span", "board", alert.board ? `Board ${alert.board}` : "Event"), time);
    if (alert.state === "resolved") {
      head.append(el("span", "resolved-mark", "resolved"));
    } else if (alert.acknowledged) {
      head.append(el("span", "acked", "acknowledged"));
    } else {
      const button = el("button", "ack", "Acknowledge");
      button.type = "button";
      button.disabled = this.replies.get(alert.id)?.kind === "pending";
      button.addEventListener("click", () => this.acknowledge(alert));
      head.append(button);
    }
    li.append(head);
    const details = detailsText(alert.details);
    if (details) li.append(el("div", "details", details));
    if (alert.action) li.append(el("p", "action", alert.action));
    const open = alert.state !== "resolved";
    if (alert.kind === "gap_ambiguous" && open) li.append(this.lines(alert));
    const steps = (alert.history || []).filter((step) => step.step !== "raised");
    if (steps.length) li.append(el("p", "history", steps.map(stepText).join(" · ")));
    const reply = this.replies.get(alert.id);
    if (reply !== undefined && open) li.append(el("p", `reply ${reply.kind}`, reply.text));
    return li;
  }

  /** One button per candidate line: the arbiter says which was played. */
  lines(alert) {
    const box = el("div", "lines");
    const lines = Array.isArray(alert.details?.lines) ? alert.details.lines : [];
    lines.forEach((line, index) => {
      const button = el("button", "choose-line", `${index + 1}) ${line.join(" ")}`);
      button.type = "button";
      button.disabled = this.replies.get(alert.id)?.kind === "pending";
      button.addEventListener("click", () => this.choose(alert, index + 1));
      box.append(button);
    });
    return box;
  }
}
