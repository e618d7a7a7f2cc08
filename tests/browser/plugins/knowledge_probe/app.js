// Creates a document in the related "wiki" project's Knowledge base, reads it back and
// lists the wiki's documents, all through relatedProjects.get("wiki").knowledge.
(function () {
  "use strict";
  const kanban = window.steamHarnessKanban;
  const text = (id, value) => (document.getElementById(id).textContent = value);

  async function createAndReadBack(title, markdown) {
    const wiki = kanban.relatedProjects.get("wiki").knowledge;
    const created = await wiki.createDocument({ title, markdown });
    text("created-id", created.id);
    const read = await wiki.getDocument(created.id);
    text("read-back", read.title + ": " + read.markdown);
    const listed = await wiki.listDocuments();
    text("listed", listed.documents.map((d) => d.title).join(", "));
  }

  kanban.ready.then(() => text("status", "ready"));
  // A button, not a form: the sandbox (no allow-forms) blocks form submission.
  document.getElementById("create").addEventListener("click", () => {
    text("status", "working");
    createAndReadBack(
      document.getElementById("title").value,
      document.getElementById("markdown").value,
    ).then(
      () => text("status", "done"),
      (error) => text("status", "failed: " + (error.code || "") + " " + error.message),
    );
  });
})();
