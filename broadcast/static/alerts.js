// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The arbiter page's alert list (docs/alerts.md): newest first, each with its kind,
 * board, time, details, suggested action and an Acknowledge button; acknowledged
 * alerts stay in the list, greyed, until the page is reloaded.
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
  return String(value);
}

/** An alert's details as "key: value" pairs. */
export function detailsText(details) {
  return Object.entries(details || {})
    .map(([key, value]) => `${key.replaceAll("_", " ")}: ${detailValue(key, value)}`)
    .join(" · ");
}

export class AlertList {
  /**
   * @param {HTMLOListElement} list where the alerts go.
   * @param {(alert: any) => void} acknowledge called by an alert's button.
   * @param {(alert: any, line: number) => void} [choose] called by a candidate line's
   *   button of a gap_ambiguous alert (the arbiter's choose_line, docs/alerts.md).
   */
  constructor(list, acknowledge, choose = () => {}) {
    this.list = list;
    this.acknowledge = acknowledge;
    this.choose = choose;
    /** @type {Map<number, any>} alert id → alert */
    this.alerts = new Map();
    /** @type {Map<number, {kind: string, text: string}>} alert id → last command reply */
    this.replies = new Map();
  }

  /**
   * The open alerts of a (re)connection's snapshot. Alerts we knew that are no longer
   * open were acknowledged meanwhile.
   */
  receiveSnapshot(open) {
    const ids = new Set(open.map((alert) => alert.id));
    for (const alert of this.alerts.values()) {
      if (!ids.has(alert.id)) this.markAcknowledged(alert);
    }
    for (const alert of open) this.alerts.set(alert.id, alert);
    this.render();
  }

  /** A new alert (or a new version of one). */
  receiveAlert(alert) {
    this.alerts.set(alert.id, alert);
    this.render();
  }

  /** An arbiter (this one or another) acknowledged alert `id`. */
  receiveAcknowledged(id) {
    const alert = this.alerts.get(id);
    if (alert === undefined) return;
    this.markAcknowledged(alert);
    this.render();
  }

  markAcknowledged(alert) {
    alert.acknowledged = true;
    if (this.replies.get(alert.id)?.kind === "error") this.replies.delete(alert.id); // stale now
  }

  /** Show a command's reply at its alert: `{kind: "ok" | "error" | "pending", text}`. */
  showReply(id, reply) {
    this.replies.set(id, reply);
    this.render();
  }

  openCount() {
    return [...this.alerts.values()].filter((alert) => !alert.acknowledged).length;
  }

  render() {
    const newest = [...this.alerts.values()].sort((a, b) => b.at - a.at || b.id - a.id);
    this.list.replaceChildren(...newest.map((alert) => this.item(alert)));
  }

  item(alert) {
    const li = el("li", "alert");
    li.dataset.id = String(alert.id);
    li.dataset.kind = alert.kind;
    li.classList.toggle("acknowledged", alert.acknowledged);
    const head = el("div", "alert-head");
    const time = el("time", "time", clockTime(alert.at));
    time.dateTime = new Date(alert.at * 1000).toISOString();
    head.append(el("span", "kind", kindText(alert.kind)), el("span", "board", alert.board ? `Board ${alert.board}` : "Event"), time);
    if (alert.acknowledged) {
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
    if (alert.kind === "gap_ambiguous" && !alert.acknowledged) li.append(this.lines(alert));
    const reply = this.replies.get(alert.id);
    if (reply !== undefined) li.append(el("p", `reply ${reply.kind}`, reply.text));
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
