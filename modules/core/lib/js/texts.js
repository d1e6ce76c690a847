// Scripts' texts in the page's language: `_(text, values)`, as for the
// text "Saved {name}" with the values {name}. (Not written out as a call
// here: `bulwark translations extract` would take it for a text.)
// The page hands the translations its scripts use in a JSON element
// (`{{ script_texts() }}` in the template, before this file); a text it has
// no translation for is shown as written. `{name}` is filled from the second
// argument, `{{` and `}}` are braces. Scripts have no plural forms: write
// texts that need none ("Deleted: {n}").
(() => {
  const element = document.getElementById("bulwark-texts");
  let texts = {};
  try {
    texts = element ? JSON.parse(element.textContent) : {};
  } catch {
    texts = {};
  }
  window._ = (text, values = {}) =>
    (texts[text] ?? text).replace(/\{\{|\}\}|\{(\w+)\}/g, (whole, name) => {
      if (name === undefined) return whole[0];
      return name in values ? String(values[name]) : whole;
    });
})();
