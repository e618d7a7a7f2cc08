// One way the Board writes a date, for the viewer's locale: relative while it is near ("in 2
// days", "yesterday at 15:16"), the locale's short date otherwise ("4 Dec", "4 Dec 2025").
// Pure: the clock, locale and time zone come in as arguments, so node tests pin them; the
// dialog, its activity and the comments all call it (the host pages' |when filter draws the
// same shape).
//
//   dayText("2026-12-07", {now})            a day (a due or start date, "YYYY-MM-DD")
//   momentText("2026-12-04T15:16:00Z", {now}) a moment (a version's writtenAt, a comment's date)
//   fullText(value)                          the exact date and time, for a title attribute

// Within this many days either way, a date is said relative to today.
const NEAR_DAYS = 6;
const DAY_MS = 86400000;
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

const options = (opts) => ({ locale: undefined, timeZone: undefined, now: new Date(), ...opts });

// The calendar day of `date` in `timeZone`, as a UTC midnight (days between two are then
// a plain subtraction, whatever daylight saving did).
function dayOf(date, timeZone) {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(date);
  const get = (type) => Number(/** @type {Intl.DateTimeFormatPart} */ (parts.find((p) => p.type === type)).value);
  return Date.UTC(get("year"), get("month") - 1, get("day"));
}

function parseDay(text) {
  const match = DAY_RE.exec(typeof text === "string" ? text : "");
  if (!match) return null;
  const time = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(time) ? null : time;
}

function parseMoment(value) {
  const date = value instanceof Date ? value : typeof value === "string" && value ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}

function relativeDays(days, locale) {
  return new Intl.RelativeTimeFormat(locale, { numeric: "auto" }).format(days, "day");
}

// "4 Dec", with the year when it is not this year's.
function shortDay(utcMidnight, thisYear, locale) {
  const date = new Date(utcMidnight);
  const year = date.getUTCFullYear() !== thisYear;
  return new Intl.DateTimeFormat(locale, { timeZone: "UTC", day: "numeric", month: "short", ...(year && { year: "numeric" }) }).format(date);
}

// A day ("YYYY-MM-DD"): "today", "tomorrow", "in 3 days", "2 days ago", else "4 Dec".
export function dayText(text, opts = {}) {
  const { locale, timeZone, now } = options(opts);
  const day = parseDay(text);
  if (day === null) return "";
  const today = dayOf(now, timeZone);
  const days = Math.round((day - today) / DAY_MS);
  if (Math.abs(days) <= NEAR_DAYS) return relativeDays(days, locale);
  return shortDay(day, new Date(today).getUTCFullYear(), locale);
}

// A moment: "just now", "5 minutes ago", "today at 15:16", "yesterday at 15:16",
// "3 days ago", else "4 Dec at 15:16" ("4 Dec 2025" a year away).
export function momentText(value, opts = {}) {
  const { locale, timeZone, now } = options(opts);
  const date = parseMoment(value);
  if (!date) return "";
  const seconds = Math.round((now.getTime() - date.getTime()) / 1000);
  const rtf = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  if (seconds >= 0 && seconds < 45) return rtf.format(0, "second");
  if (seconds >= 0 && seconds < 3600) return rtf.format(-Math.max(1, Math.round(seconds / 60)), "minute");
  const today = dayOf(now, timeZone);
  const day = dayOf(date, timeZone);
  const days = Math.round((day - today) / DAY_MS);
  const time = new Intl.DateTimeFormat(locale, { timeZone, hour: "2-digit", minute: "2-digit" }).format(date);
  if (Math.abs(days) <= 1) return relativeDays(days, locale) + " at " + time;
  if (Math.abs(days) <= NEAR_DAYS) return relativeDays(days, locale);
  const thisYear = new Date(today).getUTCFullYear();
  if (new Date(day).getUTCFullYear() !== thisYear) return shortDay(day, thisYear, locale);
  return shortDay(day, thisYear, locale) + " at " + time;
}

// The whole date (and time, for a moment) in the locale's long form: a title to hover.
export function fullText(value, opts = {}) {
  const { locale, timeZone } = options(opts);
  const day = parseDay(value);
  if (day !== null) return new Intl.DateTimeFormat(locale, { timeZone: "UTC", dateStyle: "full" }).format(new Date(day));
  const date = parseMoment(value);
  return date ? new Intl.DateTimeFormat(locale, { timeZone, dateStyle: "full", timeStyle: "short" }).format(date) : "";
}

// How near a due day is, for its colour: "overdue", "soon" (today or tomorrow) or "".
export function dueState(text, opts = {}) {
  const { timeZone, now } = options(opts);
  const day = parseDay(text);
  if (day === null) return "";
  const days = Math.round((day - dayOf(now, timeZone)) / DAY_MS);
  return days < 0 ? "overdue" : days <= 1 ? "soon" : "";
}
