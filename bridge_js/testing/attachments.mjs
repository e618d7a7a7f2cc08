// The test world's attachments: what kanban/data/attachments.py keeps of a card's files,
// in memory, with its refusals in its words. The metadata is the card's KV value
// `attachments:<card>`, written as the server writes it, so a plugin watching the board
// hears an upload or a removal as it does on a board.
//
// What differs, and why: an image's cover is the image itself (the server makes a PNG of
// at most 320x240 with Pillow), and `url` names the file but is served by nobody (the test
// page has no server); the plugin gets the cover as a Blob, as from a board's host.

const PREFIX = "attachments:";
const MAX_PER_CARD = 100;
const MAX_NAME = 255;
const OCTET = "application/octet-stream";

// The server's check_file_name: the last path component, without control characters.
/** @param {unknown} name */
function fileName(name) {
  const last = /** @type {string} */ (String(name).replaceAll("\\", "/").split("/").pop());
  const text = [...last]
    .filter((ch) => !/\p{C}/u.test(ch))
    .join("")
    .trim();
  return text && text !== "." && text !== ".." ? [...text].slice(0, MAX_NAME).join("") : null;
}

// An image as Pillow names it, and its size, from the first bytes: null for anything else.
/** @param {Uint8Array} b */
function pictureOf(b) {
  const u16 = (/** @type {number} */ i, /** @type {boolean} */ little = false) => (little ? b[i] | (b[i + 1] << 8) : (b[i] << 8) | b[i + 1]);
  const u32 = (/** @type {number} */ i) => ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
  const ascii = (/** @type {number} */ i, /** @type {number} */ n) => String.fromCharCode(...b.subarray(i, i + n));
  if (b.length >= 24 && u32(0) === 0x89504e47 && ascii(12, 4) === "IHDR") {
    return { contentType: "image/png", width: u32(16), height: u32(20) };
  }
  if (b.length >= 10 && ascii(0, 4) === "GIF8") {
    return { contentType: "image/gif", width: u16(6, true), height: u16(8, true) };
  }
  if (b.length >= 30 && ascii(0, 4) === "RIFF" && ascii(8, 4) === "WEBP") {
    const chunk = ascii(12, 4);
    if (chunk === "VP8X")
      return { contentType: "image/webp", width: 1 + (b[24] | (b[25] << 8) | (b[26] << 16)), height: 1 + (b[27] | (b[28] << 8) | (b[29] << 16)) };
    if (chunk === "VP8L") {
      const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
      return { contentType: "image/webp", width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
    }
    if (chunk === "VP8 ") return { contentType: "image/webp", width: u16(26, true) & 0x3fff, height: u16(28, true) & 0x3fff };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // The first start-of-frame marker holds the size.
    for (let i = 2; i + 9 < b.length && b[i] === 0xff; i += 2 + u16(i + 2)) {
      const marker = b[i + 1];
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { contentType: "image/jpeg", width: u16(i + 7), height: u16(i + 5) };
      }
    }
  }
  return null;
}

/** `store(project, key, value, by)` writes a value as the world does, `drop(project, key,
 * by)` deletes one; `refusal(code, message)` makes one of the world's refusals. */
/**
 * @typedef {{item: {id: string, image: object | null} & Record<string, unknown>, file: Blob}} Entry
 * @param {{store: (project: string, key: string, value: unknown, by: string) => void,
 *   drop: (project: string, key: string, by: string) => void,
 *   refusal: (code: string, message: string) => Error}} world
 */
export function createAttachments({ store, drop, refusal }) {
  // project -> card -> [{item, file}], the item as the service keeps it (its public part).
  /** @type {Map<string, Map<string, Entry[]>>} */
  const cards = new Map();
  let next = 0;
  /** @param {string} project @param {string} card */
  const held = (project, card) => cards.get(project)?.get(card) || [];
  /** @param {string} project @param {string} card @param {Entry[]} entries @param {string} by */
  const keep = (project, card, entries, by) => {
    if (!cards.has(project)) cards.set(project, new Map());
    /** @type {Map<string, Entry[]>} */ (cards.get(project)).set(card, entries);
    store(project, PREFIX + card, { attachments: entries.map((e) => e.item) }, by);
  };
  /** @param {Entry} entry */
  const listed = ({ item, file }) => ({
    ...item,
    url: "https://kanban.test/attachments/" + item.id + "/",
    thumbnailUrl: null,
    thumbnail: item.image ? file : null,
  });

  return {
    /** The card's attachments, as a board's host hands them to the SDK. */
    /** @param {string} project @param {string} card */
    list(project, card) {
      return held(project, card).map(listed);
    },
    /** The file's name as the service keeps it; checked before access is decided. */
    /** @param {unknown} name */
    name(name) {
      const shown = fileName(name);
      if (shown === null) throw refusal("invalid_argument", "name must name a file");
      return shown;
    },
    /** The id of the attachment a delete names; checked before access is decided. */
    /** @param {any} value */
    id(value) {
      const id = value?.id;
      if (typeof id !== "string" || !id) throw refusal("invalid_argument", "name the attachment: value {id}");
      return id;
    },
    /** @param {string} project @param {string} card @param {{name: string, file: Blob}} value @param {{username: string}} user */
    async upload(project, card, { name, file }, user) {
      const shown = fileName(name);
      const picture = pictureOf(new Uint8Array(await file.arrayBuffer()));
      const entries = held(project, card);
      if (entries.length >= MAX_PER_CARD) throw refusal("too_large", `a card holds at most ${MAX_PER_CARD} attachments`);
      const item = {
        id: (++next).toString(16).padStart(32, "0"),
        card,
        name: shown,
        contentType: picture ? picture.contentType : OCTET,
        size: file.size,
        image: picture && { width: picture.width, height: picture.height },
        uploadedBy: user.username,
        uploadedAt: new Date().toISOString(),
      };
      keep(project, card, [...entries, { item, file }], user.username);
      return listed({ item, file });
    },
    /** @param {string} project @param {string} card @param {string} id @param {{username: string}} user */
    remove(project, card, id, user) {
      const entries = held(project, card);
      if (!entries.some((e) => e.item.id === id)) throw refusal("not_found", "no such attachment on this card");
      const kept = entries.filter((e) => e.item.id !== id);
      if (kept.length) keep(project, card, kept, user.username);
      else {
        cards.get(project)?.delete(card);
        drop(project, PREFIX + card, user.username);
      }
      return {};
    },
    /** What a plain `set` of the key may not do (kanban/data/kv.py check_attachments_write). */
    /** @param {string} key */
    guard(key) {
      if (key.startsWith(PREFIX)) {
        throw refusal("invalid_argument", `keys starting with '${PREFIX}' hold a card's attachments; use the attachments operations`);
      }
    },
  };
}
