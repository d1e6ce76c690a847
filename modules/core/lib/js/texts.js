// Scripts' texts in the page's language: `_(text, values)`, as for the
// text "Saved {name}" with the values {name}. (Not written out as a call
// here: `bulwark translations extract` would take it for a text.)
// The page hands the translations its scripts use in JSON elements
// (`{{ script_texts("js/my-script.js") }}` in the template, before this
// file); a text without a translation is shown as written. `{name}` is filled
// from the second argument, `{{` and `}}` are braces. Scripts have no plural
// forms: write texts that need none ("Deleted: {n}").
(() => {
  const texts = {};
  for (const element of document.querySelectorAll("script.bulwark-texts")) {
    try {
      Object.assign(texts, JSON.parse(element.textContent));
    } catch {
      // A broken element gives no translations; the texts show as written.
    }
  }
  window._ = (text, values = {}) =>
    (texts[text] ?? text).replace(/\{\{|\}\}|\{(\w+)\}/g, (whole, name) => {
      if (name === undefined) return whole[0];
      return name in values ? String(values[name]) : whole;
    });
})();
