// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A section's prize race "if the event ended now", under its standings (`#standings`).
 *
 * From `/prizes.json` (docs/prizes.md): for each prize group, its places after the
 * one-cash-prize rule, each player with what they would receive (a share of tied places,
 * pooled money marked) and the trophies; a group whose money all went elsewhere says so.
 * Pure DOM building: the panels fetch the JSON and call `prizeRace`.
 */

import { el } from "./boardview.js";

/** "$216.66": an amount as the prize list writes it ("" for none). */
export function moneyText(amount) {
  if (typeof amount !== "number" || amount <= 0) return "";
  return `$${amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** "2", "2½", "½": points as the standings show them. */
function points(value) {
  if (typeof value !== "number") return "";
  const whole = Math.floor(value);
  if (value - whole < 0.5) return String(whole);
  return whole === 0 ? "½" : `${whole}½`;
}

function groupTable(section, group) {
  const cash = new Map();
  for (const award of section.cash ?? []) {
    if (award.group === group.name) cash.set(award.start_rank, award);
  }
  const trophies = new Map();
  for (const trophy of section.trophies ?? []) {
    if (trophy.group === group.name) trophies.set(trophy.start_rank, trophy);
  }
  const table = el("table", "prizes");
  table.dataset.group = group.name;
  const body = el("tbody");
  for (const tie of group.final ?? []) {
    for (const player of tie.players) {
      const award = cash.get(player.start_rank);
      const trophy = trophies.get(player.start_rank);
      const row = el("tr");
      row.dataset.rank = String(player.start_rank);
      row.append(el("td", "places", tie.places));
      row.append(el("td", "player", player.name));
      row.append(el("td", "points", points(tie.points)));
      const prize = el("td", "prize", moneyText(award?.amount));
      if (award?.pooled_with?.length) prize.append(el("span", "pooled", " pooled"));
      if (trophy) prize.append(el("span", "trophy", `${prize.textContent ? " + " : ""}${trophy.trophy}`));
      row.append(prize);
      body.append(row);
    }
  }
  if (body.children.length === 0) {
    const row = el("tr");
    const cell = el("td", "empty", "no one left: its players won more elsewhere");
    cell.colSpan = 4;
    row.append(cell);
    body.append(row);
  }
  table.append(body);
  return table;
}

/** The section's race as one element, or null when it has no prizes. */
export function prizeRace(section) {
  if (!section) return null;
  const part = el("div", "prize-race");
  part.dataset.section = section.section;
  if (section.problems) {
    part.append(el("h3", "", "Prizes"), el("p", "empty", section.problems.join("; ")));
    return part;
  }
  const provisional = section.groups_final ? "" : " · rating groups provisional";
  part.append(el("h3", "", `Prizes if the event ended now${provisional}`));
  for (const group of section.groups ?? []) {
    part.append(el("h4", "", `${group.name} · ${group.eligible} eligible`));
    part.append(groupTable(section, group));
  }
  return part;
}
