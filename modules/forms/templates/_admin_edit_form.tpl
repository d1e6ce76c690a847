{# The form builder, in the resource's editor (included by admin_edit.tpl for
   the category "form"): the fields, who is told of each answer, and what the
   visitor reads afterwards, saved into the resource's properties through the
   JSON API (lib/js/admin-forms.js). #}
<section id="form-builder" class="editor-section" aria-labelledby="form-builder-title" data-id="{{ r.id }}">
  <script type="application/json" id="form-fields-data">{{ (r.fields if r.fields is sequence else [])|tojson }}</script>
  <h2 id="form-builder-title">{{ _("Form fields") }}</h2>
  <p>{{ _("The questions of this form, in order.") }} {% if r.name is startingwith("form_") %}{{ _("Templates show it with") }}
    <code>{% raw %}{% set form = m.forms("{% endraw %}{{ r.name[5:] }}{% raw %}") %}{% include "_form.tpl" %}{% endraw %}</code>; {% endif %}{{ _("its own page is") }}
    <a href="{{ r.page_url }}">{{ r.page_url }}</a>. <a href="/admin/forms?form={{ r.id }}">{{ _("Answers so far") }}</a>.</p>
  <p id="form-status" class="message" role="status" aria-live="polite"></p>
  <ol id="form-fields" class="form-fields"></ol>
  <p id="form-fields-empty" class="empty" hidden>{{ _("No fields yet: add the first below.") }}</p>
  <p><button type="button" id="form-add-field">{{ _("Add a field") }}</button></p>
  <div class="form-settings">
    <label>{{ _("Send each answer to") }} <input id="form-recipients" value="{{ (r.recipients if r.recipients is sequence else [])|join(', ') }}" placeholder="ann@example.org, desk@example.org" aria-describedby="form-recipients-help"></label>
    <small id="form-recipients-help">{{ _("E-mail addresses, separated by commas. Empty: the site's editors who have an address.") }}</small>
    <label>{{ _("After sending, the visitor reads") }} <textarea id="form-thanks" rows="2">{{ r.thanks or "" }}</textarea></label>
    <label>{{ _("The send button says") }} <input id="form-submit" value="{{ r.submit or 'Send' }}" maxlength="60"></label>
  </div>
  <div class="savebar"><button type="button" id="form-save" class="primary">{{ _("Save the form") }}</button></div>
</section>
<template id="form-field-row">
  <li class="form-field card">
    <div class="columns">
      <label>{{ _("Question") }} <input class="f-label" required maxlength="200"></label>
      <label>{{ _("Type") }}
        <select class="f-type">
          <option value="text">{{ _("Text") }}</option>
          <option value="textarea">{{ _("Long text") }}</option>
          <option value="email">{{ _("E-mail address") }}</option>
          <option value="number">{{ _("Number") }}</option>
          <option value="date">{{ _("Date") }}</option>
          <option value="choice">{{ _("Choice (one)") }}</option>
          <option value="multiple">{{ _("Multiple choice") }}</option>
          <option value="checkbox">{{ _("Checkbox") }}</option>
          <option value="file">{{ _("File upload") }}</option>
        </select>
      </label>
    </div>
    <label class="check"><input type="checkbox" class="f-required"> {{ _("Required") }}</label>
    <label class="f-options-label">{{ _("Options, one a line") }} <textarea class="f-options" rows="3"></textarea></label>
    <div class="columns f-range">
      <label>{{ _("Lowest") }} <input class="f-min" type="number" step="any"></label>
      <label>{{ _("Highest") }} <input class="f-max" type="number" step="any"></label>
    </div>
    <label>{{ _("Help text") }} <input class="f-help" maxlength="300"></label>
    <p class="row-actions">
      <button type="button" data-action="up">{{ _("Up") }}</button>
      <button type="button" data-action="down">{{ _("Down") }}</button>
      <button type="button" data-action="remove" class="danger">{{ _("Remove") }}</button>
      <small class="f-name muted"></small>
    </p>
  </li>
</template>
{{ lib("js/admin-forms.js") }}
