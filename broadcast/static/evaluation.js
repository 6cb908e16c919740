// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The engine's evaluation as spectators read it (docs/viewer.md, "The engine's evaluation"): a line
 * "+0.34 d22 Nf3 Nc6 Bb5" and a bar, both from White's point of view. Pure: no DOM.
 *
 * An evaluation (docs/broadcast.md, `eval`) has `cp` (centipawns) or `mate` (moves to
 * mate; negative: Black mates; 0: the side to move is mated), neither when there is none.
 */

/** Whether there is an evaluation to show. */
export function hasScore(evaluation) {
  return evaluation != null && (Number.isInteger(evaluation.cp) || Number.isInteger(evaluation.mate));
}

/** "+0.34", "-1.20", "0.00", "#3", "#-2"; "" without an evaluation. */
export function scoreText(evaluation) {
  if (!hasScore(evaluation)) return "";
  if (Number.isInteger(evaluation.mate)) {
    if (evaluation.mate === 0) return turnOf(evaluation.fen) === "w" ? "0-1" : "1-0";
    return `#${evaluation.mate}`;
  }
  const pawns = evaluation.cp / 100;
  return `${pawns > 0 ? "+" : ""}${pawns.toFixed(2)}`;
}

/** The whole line: "+0.34 d22 Nf3 Nc6 Bb5" (`moves` plies of the best line at most). */
export function evaluationText(evaluation, moves = 6) {
  if (!hasScore(evaluation)) return "";
  const depth = evaluation.depth > 0 ? `d${evaluation.depth}` : "";
  const line = (evaluation.line ?? []).slice(0, moves).join(" ");
  return [scoreText(evaluation), depth, line].filter(Boolean).join(" ");
}

/**
 * White's share of the bar, 0 to 1: a mate fills it; centipawns follow the usual
 * winning-chances curve, so that +1 is clearly White's and +8 almost all of it.
 */
export function whiteShare(evaluation) {
  if (!hasScore(evaluation)) return 0.5;
  if (Number.isInteger(evaluation.mate)) {
    if (evaluation.mate === 0) return turnOf(evaluation.fen) === "w" ? 0 : 1;
    return evaluation.mate > 0 ? 1 : 0;
  }
  return 1 / (1 + Math.exp(-0.00368208 * evaluation.cp));
}

/** Whether two FENs name the same position (pieces and side to move). */
export function samePosition(a, b) {
  const key = (fen) => String(fen ?? "").split(" ").slice(0, 2).join(" ");
  return key(a) === key(b);
}

function turnOf(fen) {
  return String(fen ?? "").split(" ")[1] === "b" ? "b" : "w";
}
