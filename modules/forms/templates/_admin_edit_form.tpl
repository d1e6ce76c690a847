{# The form builder, in the resource's editor (included by admin_edit.tpl for
   the category "form"): the fields, who is told of each answer, and what the
   visitor reads afterwards, saved into the resource's properties through the
   JSON API (lib/js/admin-forms.js). #}
<section id="form-builder" class="editor-section" aria-labelledby="form-builder-title" data-id="{{ r.id }}">
  <script type="application/json" id="form-fields-data">{{ (r.fields if r.fields is sequence else [])|tojson }}</script>
  <h2 id="form-builder-title">Form fields</h2>
  <p>The questions of this form, in order. {% if r.name is startingwith("form_") %}Templates show it with
    <code>{% raw %}{% set form = m.forms("{% endraw %}{{ r.name[5:] }}{% raw %}") %}{% include "_form.tpl" %}{% endraw %}</code>; {% endif %}its own page is
    <a href="{{ r.page_url }}">{{ r.page_url }}</a>. <a href="/admin/forms?form={{ r.id }}">Answers so far</a>.</p>
  <p id="form-status" class="message" role="status" aria-live="polite"></p>
  <ol id="form-fields" class="form-fields"></ol>
  <p id="form-fields-empty" class="empty" hidden>No fields yet: add the first below.</p>
  <p><button type="button" id="form-add-field">Add a field</button></p>
  <div class="form-settings">
    <label>Send each answer to <input id="form-recipients" value="{{ (r.recipients if r.recipients is sequence else [])|join(', ') }}" placeholder="ann@example.org, desk@example.org" aria-describedby="form-recipients-help"></label>
    <small id="form-recipients-help">E-mail addresses, separated by commas. Empty: the site's editors who have an address.</small>
    <label>After sending, the visitor reads <textarea id="form-thanks" rows="2">{{ r.thanks or "" }}</textarea></label>
    <label>The send button says <input id="form-submit" value="{{ r.submit or 'Send' }}" maxlength="60"></label>
  </div>
  <div class="savebar"><button type="button" id="form-save" class="primary">Save the form</button></div>
</section>
<template id="form-field-row">
  <li class="form-field card">
    <div class="columns">
      <label>Question <input class="f-label" required maxlength="200"></label>
      <label>Type
        <select class="f-type">
          <option value="text">Text</option>
          <option value="textarea">Long text</option>
          <option value="email">E-mail address</option>
          <option value="number">Number</option>
          <option value="date">Date</option>
          <option value="choice">Choice (one)</option>
          <option value="multiple">Multiple choice</option>
          <option value="checkbox">Checkbox</option>
          <option value="file">File upload</option>
        </select>
      </label>
    </div>
    <label class="check"><input type="checkbox" class="f-required"> Required</label>
    <label class="f-options-label">Options, one a line <textarea class="f-options" rows="3"></textarea></label>
    <div class="columns f-range">
      <label>Lowest <input class="f-min" type="number" step="any"></label>
      <label>Highest <input class="f-max" type="number" step="any"></label>
    </div>
    <label>Help text <input class="f-help" maxlength="300"></label>
    <p class="row-actions">
      <button type="button" data-action="up">Up</button>
      <button type="button" data-action="down">Down</button>
      <button type="button" data-action="remove" class="danger">Remove</button>
      <small class="f-name muted"></small>
    </p>
  </li>
</template>
{{ lib("js/admin-forms.js") }}
