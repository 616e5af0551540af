// Long comic exports with their progress (docs/EXPORTS.md, "Background exports").
//
// A PDF or CBZ link carrying data-job-url starts the export in the background instead of
// waiting on one long request: the page posts to that URL, shows "page N of M" beside
// the link while it asks the status URL again, and fetches the file when it is done. The
// link's own href (the export made in the request) stays for a page without script.
(function () {
  "use strict";

  var POLL_MS = 700;

  function csrf() {
    var studio = document.querySelector(".studio");
    if (!studio) return "";
    try {
      return JSON.parse(studio.getAttribute("hx-headers"))["X-CSRFToken"];
    } catch (e) {
      return "";
    }
  }

  function statusOf(link) {
    var next = link.nextElementSibling;
    if (next && next.matches("[data-export-status]")) return next;
    var span = document.createElement("span");
    span.className = "comic-export-status";
    span.dataset.exportStatus = "true";
    span.setAttribute("role", "status");
    link.after(span);
    return span;
  }

  function say(link, key, job) {
    var words = link.closest("[data-export-words]");
    var text = (words && words.dataset[key]) || "";
    if (job) text = text.replace("{done}", job.pages_done).replace("{pages}", job.pages);
    statusOf(link).textContent = " " + text;
  }

  function follow(link, job) {
    if (job.state === "done") {
      say(link, "exportDone", job);
      link.removeAttribute("aria-busy");
      window.location.href = job.file_url;
      return;
    }
    if (job.state === "failed") {
      say(link, "exportFailed", job);
      statusOf(link).textContent += job.error ? " (" + job.error + ")" : "";
      link.removeAttribute("aria-busy");
      return;
    }
    say(link, job.state === "queued" ? "exportQueued" : "exportDrawing", job);
    setTimeout(function () {
      fetch(job.status_url, { credentials: "same-origin" })
        .then(answer)
        .then(function (next) {
          follow(link, next);
        })
        .catch(function () {
          fail(link);
        });
    }, POLL_MS);
  }

  function answer(r) {
    if (r.status !== 200 && r.status !== 202) throw new Error(String(r.status));
    return r.json();
  }

  function fail(link) {
    say(link, "exportFailed", null);
    link.removeAttribute("aria-busy");
  }

  document.addEventListener("click", function (e) {
    var link = e.target.closest && e.target.closest("a[data-job-url]");
    if (!link || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey) return;
    e.preventDefault();
    if (link.getAttribute("aria-busy") === "true") return;
    link.setAttribute("aria-busy", "true");
    say(link, "exportQueued", { pages_done: 0, pages: "…" });
    fetch(link.dataset.jobUrl, {
      method: "POST",
      headers: { "X-CSRFToken": csrf() },
      credentials: "same-origin",
    })
      .then(answer)
      .then(function (job) {
        follow(link, job);
      })
      .catch(function () {
        fail(link);
      });
  });
})();
