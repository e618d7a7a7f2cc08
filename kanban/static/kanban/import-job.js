// The import job's page: polls its status once a second until the job ends, moving the
// progress bar, then reloads once so the server renders the report (or the refusal).
const section = document.getElementById("import-job");
if (section && section.dataset.finished !== "true") {
  const bar = section.querySelector("[data-testid=job-progress]");
  const count = section.querySelector("[data-testid=job-count]");
  const status = section.querySelector("[data-testid=job-status]");
  const poll = async () => {
    try {
      const response = await fetch(section.dataset.statusUrl, { credentials: "same-origin" });
      if (response.ok) {
        const job = await response.json();
        bar.value = job.percent;
        bar.textContent = `${job.percent}%`;
        count.textContent = `${job.done} of ${job.total}`;
        if (job.status === "running") status.textContent = "Importing…";
        if (job.status === "succeeded" || job.status === "failed") {
          window.location.reload();
          return;
        }
      }
    } catch {
      // A dropped request (a worker restarting): the next poll tries again.
    }
    setTimeout(poll, 1000);
  };
  setTimeout(poll, 1000);
}
