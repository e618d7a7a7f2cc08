import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { dayText, dueState, fullText, momentText } from "../../plugins/board/board-dates.js";

// Friday 4 December 2026, 15:30 UTC; the tests read it in English, in UTC and in Berlin.
const now = new Date("2026-12-04T15:30:00Z");
const en = { locale: "en-GB", timeZone: "UTC", now };

describe("a day, as a due or start date", () => {
  test("near days are relative to today", () => {
    assert.equal(dayText("2026-12-04", en), "today");
    assert.equal(dayText("2026-12-05", en), "tomorrow");
    assert.equal(dayText("2026-12-03", en), "yesterday");
    assert.equal(dayText("2026-12-06", en), "in 2 days");
    assert.equal(dayText("2026-12-01", en), "3 days ago");
  });

  test("far days are the locale's short date, with the year only when it is another", () => {
    assert.equal(dayText("2026-12-24", en), "24 Dec");
    assert.equal(dayText("2025-12-24", en), "24 Dec 2025");
    assert.equal(dayText("2026-12-24", { ...en, locale: "en-US" }), "Dec 24");
    assert.equal(dayText("2026-12-24", { ...en, locale: "de-DE" }), "24. Dez.");
  });

  test("today is the viewer's: late evening in UTC is already tomorrow in Tokyo", () => {
    const late = { locale: "en-GB", now: new Date("2026-12-04T22:00:00Z") };
    assert.equal(dayText("2026-12-05", { ...late, timeZone: "UTC" }), "tomorrow");
    assert.equal(dayText("2026-12-05", { ...late, timeZone: "Asia/Tokyo" }), "today");
  });

  test("anything that is not a day says nothing", () => {
    for (const bad of [null, undefined, "", "2026-13-01x", "tomorrow", 20261204]) assert.equal(dayText(bad, en), "");
  });

  test("a due day is overdue before today, soon today or tomorrow", () => {
    assert.equal(dueState("2026-12-03", en), "overdue");
    assert.equal(dueState("2026-12-04", en), "soon");
    assert.equal(dueState("2026-12-05", en), "soon");
    assert.equal(dueState("2026-12-09", en), "");
    assert.equal(dueState(null, en), "");
  });
});

describe("a moment, as a version's or a comment's time", () => {
  test("seconds and minutes ago", () => {
    assert.equal(momentText("2026-12-04T15:29:50Z", en), "now");
    assert.equal(momentText("2026-12-04T15:25:00Z", en), "5 minutes ago");
  });

  test("today and yesterday with the time, in the viewer's zone", () => {
    assert.equal(momentText("2026-12-04T09:05:00Z", en), "today at 09:05");
    assert.equal(momentText("2026-12-03T15:16:00Z", en), "yesterday at 15:16");
    assert.equal(momentText("2026-12-03T15:16:00Z", { ...en, timeZone: "Europe/Berlin" }), "yesterday at 16:16");
  });

  test("a few days ago, then the date and time; another year's without the time", () => {
    assert.equal(momentText("2026-12-01T08:00:00Z", en), "3 days ago");
    assert.equal(momentText("2026-11-20T08:00:00Z", en), "20 Nov at 08:00");
    assert.equal(momentText("2025-11-20T08:00:00Z", en), "20 Nov 2025");
  });

  test("a moment that cannot be read says nothing", () => {
    assert.equal(momentText("", en), "");
    assert.equal(momentText("soon", en), "");
  });

  test("the full text names the weekday, for a title to hover", () => {
    assert.equal(fullText("2026-12-24", en), "Thursday, 24 December 2026");
    assert.match(fullText("2026-12-03T15:16:00Z", en), /^Thursday,? 3 December 2026( at|,) 15:16$/);
  });
});
