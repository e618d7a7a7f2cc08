// A third party's plugin using attachments as the SDK README shows: it lists card c1's
// files the moment its script runs, attaches what the file input picks, shows each cover
// in an <img>, links each file, and re-lists when the card's attachments change anywhere.
// `#state` says what the last listing found ("listed N"), `#action` how the last upload or
// removal went ("uploaded NAME", "removed"), either "failed CODE: MESSAGE", for the test.
const kanban = window.steamHarnessKanban;
const CARD = "c1";
const state = document.getElementById("state");
const action = document.getElementById("action");
const list = document.getElementById("list");

const failed = (element) => (error) => (element.textContent = "failed " + error.code + ": " + error.message);

function render(attachments) {
  list.replaceChildren(
    ...attachments.map((attachment) => {
      const item = document.createElement("li");
      item.dataset.id = attachment.id;
      if (attachment.thumbnailUrl) {
        const cover = document.createElement("img");
        cover.src = attachment.thumbnailUrl;
        cover.alt = "cover of " + attachment.name;
        item.append(cover);
      }
      const link = document.createElement("a");
      link.href = attachment.url;
      link.target = "_blank";
      link.rel = "noopener";
      link.textContent = attachment.name + " (" + attachment.size + " bytes)";
      const remove = document.createElement("button");
      remove.textContent = "Remove " + attachment.name;
      remove.addEventListener("click", () =>
        kanban.attachments.remove(null, CARD, attachment.id).then(() => (action.textContent = "removed"), failed(action)),
      );
      item.append(link, remove);
      return item;
    }),
  );
}

async function show() {
  const attachments = await kanban.attachments.list(null, CARD);
  render(attachments);
  state.textContent = "listed " + attachments.length;
}

show().catch(failed(state));
// Anyone's upload or removal, this page's too, changes the card's attachments:<card>.
kanban.kv.watch(() => show().catch(failed(state)), { prefix: "attachments:" + CARD });

document.getElementById("file").addEventListener("change", async (event) => {
  const [file] = event.target.files;
  event.target.value = "";
  try {
    const attached = await kanban.attachments.upload(null, CARD, file);
    action.textContent = "uploaded " + attached.name;
  } catch (error) {
    failed(action)(error);
  }
});
