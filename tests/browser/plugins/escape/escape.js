// What the red team's plugin did: send the whole tab elsewhere (here /healthz, so the
// test stays on this machine). Framed by a board, the sandbox forbids it; opened as the
// tab's own page, only the server's refusal stops it.
document.getElementById("state").textContent = "tried";
try {
  window.top.location.href = "/healthz#escaped";
} catch (error) {
  document.getElementById("state").textContent = "blocked: " + error.name;
}
