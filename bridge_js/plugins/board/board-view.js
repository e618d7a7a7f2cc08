// What the Board shows, worked out from the model before any node is touched: pure like
// board-core.js, and tested in node. A change of one card costs the page work in
// proportion to that card, not to the board: columns are grouped once per new set of
// cards, a filter is asked once per card and filter, and a long column draws only the
// cards near what is on screen (windowing), between two spacers that stand for the rest.
import { compareCards, isFiltering, matchesFilter } from "./board-core.js";

// A column longer than this is windowed; a shorter one draws every card, so small boards
// behave exactly as they always did (every card in the DOM, found by tests and find-in-page).
export const WINDOW_FROM = 120;
// Drawn above and below what the column shows, in pixels: enough that a quick scroll or a
// keyboard move lands on cards already drawn.
export const WINDOW_MARGIN = 900;
// A card's height before it was ever drawn: the median of a comfortable card with labels.
export const ESTIMATED_HEIGHT = 76;

// The board's open cards by column, each column in board order; a card whose column no
// longer exists shows in the first column rather than vanishing (as cardsInColumn does).
export function groupByColumn(cards, columns) {
  const groups = new Map(columns.map((c) => [c.id, []]));
  const fallback = columns.length ? groups.get(columns[0].id) : null;
  for (const card of cards) {
    if (card.archived) continue;
    const group = groups.get(card.column) || fallback;
    if (group) group.push(card);
  }
  for (const group of groups.values()) group.sort(compareCards);
  return groups;
}

// Past this many changed cards a fresh grouping is as cheap as patching the last one.
const MOST_PATCHED = 64;

// `groupByColumn` of the newest cards and columns. A new array whose changed cards kept
// their place (same id at the same index, same column, rank and archived state: an edit, a
// tick, a comment) patches the groups it had: only the touched columns get new arrays, so
// the others keep their identity and every cache keyed on it (filters, heights). Anything
// else (an add, a move, an archive, new columns) groups again.
export function createGrouping() {
  let cards = null;
  let columns = null;
  let groups = new Map();
  // card id -> [the group it is in, its index there]
  let where = new Map();

  function regroup() {
    groups = groupByColumn(cards, columns);
    where = new Map();
    for (const [id, group] of groups) {
      group.forEach((card, i) => {
        where.set(card.id, [id, i]);
      });
    }
  }

  function patched(next) {
    if (!cards || next.length !== cards.length) return false;
    const changed = [];
    for (let i = 0; i < next.length; i++) {
      const was = cards[i];
      const now = next[i];
      if (was === now) continue;
      const moved = was.id !== now.id || was.column !== now.column || was.rank !== now.rank;
      if (moved || Boolean(was.archived) !== Boolean(now.archived) || changed.length === MOST_PATCHED) return false;
      changed.push(now);
    }
    const touched = new Map();
    for (const card of changed) {
      const at = where.get(card.id);
      if (!at) continue; // archived before and after: in no column
      let group = touched.get(at[0]);
      if (!group) touched.set(at[0], (group = groups.get(at[0]).slice()));
      group[at[1]] = card;
    }
    if (touched.size) groups = new Map([...groups, ...touched]);
    return true;
  }

  return (nextCards, nextColumns) => {
    if (nextCards === cards && nextColumns === columns) return groups;
    const keep = nextColumns === columns && patched(nextCards);
    cards = nextCards;
    columns = nextColumns;
    if (!keep) regroup();
    return groups;
  };
}

// matchesFilter, remembered per card object: typing in the filter asks each card once per
// keystroke, and a change of one card asks only that card again.
export function createFilterCache() {
  let signature = "";
  let results = new WeakMap();
  return {
    shown(cards, filter, today, me) {
      if (!isFiltering(filter)) return cards;
      const next = JSON.stringify([filter, today, me]);
      if (next !== signature) {
        signature = next;
        results = new WeakMap();
      }
      return cards.filter((card) => {
        let hit = results.get(card);
        if (hit === undefined) {
          hit = matchesFilter(card, filter, today, me);
          results.set(card, hit);
        }
        return hit;
      });
    },
  };
}

// Which of a column's cards to draw: `heights` is each card's height (drawn, or
// estimated), `gap` the space between two cards, `top` and `height` the part of the
// column on screen. Gives the first card drawn and the one after the last, and the pixels
// the spacers before and after them stand for.
export function windowOf({ heights, gap, top, height, margin = WINDOW_MARGIN }) {
  const count = heights.length;
  if (count < WINDOW_FROM) return { start: 0, end: count, before: 0, after: 0 };
  const from = Math.max(0, top - margin);
  const to = top + Math.max(height, 0) + margin;
  let y = 0;
  let start = 0;
  while (start < count && y + heights[start] + gap <= from) y += heights[start++] + gap;
  const before = y;
  let end = start;
  while (end < count && y < to) y += heights[end++] + gap;
  let after = 0;
  for (let i = end; i < count; i++) after += heights[i] + gap;
  return { start, end, before, after };
}

// Where card `index` starts in its column, in the same pixels as windowOf.
export function offsetOf(heights, gap, index) {
  let y = 0;
  for (let i = 0; i < index && i < heights.length; i++) y += heights[i] + gap;
  return y;
}
