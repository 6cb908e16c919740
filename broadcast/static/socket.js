// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A websocket that reconnects by itself, with capped exponential backoff and jitter.
 *
 * States (`onState(state, detail)`):
 *
 *   connecting ──open──► open ──close──► waiting ──timer──► connecting
 *        └──────────failed─────────────────┘
 *   any ──stop()──► stopped   (for good: a refused token, the page going away)
 *
 * The URL is asked for at every attempt, so a feed can resume with the last `seq`.
 * The backoff starts again from `initial` once a connection has delivered a message.
 */

export const State = Object.freeze({
  CONNECTING: "connecting",
  OPEN: "open",
  WAITING: "waiting",
  STOPPED: "stopped",
});

/** A connection state in words, for the page header. */
export function stateText(state, detail, openText) {
  if (state === State.WAITING) return `reconnecting in ${Math.ceil(detail.wait / 1000)} s…`;
  if (state === State.OPEN) return openText;
  return state === State.CONNECTING ? "connecting…" : "not connected";
}

export class ReconnectingSocket {
  /**
   * @param {object} options
   * @param {() => string} options.url the URL to connect to now.
   * @param {(message: any) => void} options.onMessage each parsed JSON message (each
   *   element of a batched frame on its own).
   * @param {string[]} [options.protocols] websocket subprotocols to offer
   *   (`["dgtcast.batch"]`: a frame's events as one JSON array, docs/broadcast.md).
   * @param {(state: string, detail: any) => void} [options.onState] state changes.
   * @param {(socket: WebSocket) => void} [options.onOpen] right after the handshake.
   * @param {number} [options.initial] first retry delay, ms.
   * @param {number} [options.maximum] longest retry delay, ms.
   */
  constructor({
    url,
    onMessage,
    protocols = [],
    onState = () => {},
    onOpen = () => {},
    initial = 500,
    maximum = 15000,
  }) {
    this.url = url;
    this.protocols = protocols;
    this.onMessage = onMessage;
    this.onState = onState;
    this.onOpen = onOpen;
    this.initial = initial;
    this.maximum = maximum;
    this.delay = initial;
    this.state = State.STOPPED;
    /** @type {WebSocket | null} */
    this.ws = null;
    this.timer = null;
  }

  /** Connect now (also to retry at once, e.g. when the network comes back). */
  start() {
    clearTimeout(this.timer);
    this.timer = null;
    this.detach();
    this.setState(State.CONNECTING);
    const ws = new WebSocket(this.url(), this.protocols);
    this.ws = ws;
    let heard = false;
    ws.onopen = () => {
      this.setState(State.OPEN);
      this.onOpen(ws);
    };
    ws.onmessage = (event) => {
      if (!heard) {
        heard = true;
        this.delay = this.initial;
      }
      this.receive(event.data);
    };
    ws.onclose = (event) => this.closed(ws, event);
  }

  /** Close the connection and reconnect at once (a fresh snapshot is needed). */
  restart() {
    this.delay = this.initial;
    this.start();
  }

  /** Close for good. */
  stop(reason = "") {
    clearTimeout(this.timer);
    this.timer = null;
    this.detach();
    this.setState(State.STOPPED, reason);
  }

  /** Send one JSON message; false when not connected. */
  send(message) {
    if (this.ws === null || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Retry now if waiting (the browser says the network is back). */
  retrySoon() {
    if (this.state === State.WAITING) this.start();
  }

  /** One frame: a message, or (`?batch=1` feeds) an array of messages, in order. */
  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      console.warn("dgtcast: not JSON:", text);
      return;
    }
    if (!Array.isArray(message)) {
      this.onMessage(message);
      return;
    }
    for (const each of message) this.onMessage(each);
  }

  closed(ws, event) {
    if (ws !== this.ws) return;
    this.ws = null;
    if (this.state === State.STOPPED) return;
    const wait = Math.round(this.delay * (0.8 + 0.4 * Math.random()));
    this.delay = Math.min(this.maximum, this.delay * 2);
    this.setState(State.WAITING, { wait, code: event.code, reason: event.reason });
    this.timer = setTimeout(() => this.start(), wait);
  }

  detach() {
    const ws = this.ws;
    this.ws = null;
    if (ws === null) return;
    ws.onopen = ws.onmessage = ws.onclose = null;
    if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.close(1000);
  }

  setState(state, detail = null) {
    this.state = state;
    this.onState(state, detail);
  }
}
