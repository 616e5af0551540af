// Every page: the language menu in the header sends its form as soon as a language is
// picked (without script, its "Go" button does). The site's Content-Security-Policy runs
// no inline handler, so this lives here rather than in an onchange attribute.
(function () {
  "use strict";
  document.addEventListener("change", function (e) {
    var field = e.target;
    if (field && field.matches && field.matches("select[data-submit-on-change]") && field.form) {
      field.form.submit();
    }
  });
})();
