{% extends "admin_base.tpl" %}
{# A resource's texts in every language of the site, side by side: what is
   missing is flagged, one language can start another, and what is typed is
   kept in this browser until it is saved (docs/languages.md). #}
{% set r = m.rsc[id] %}
{% set names = {"en": "English", "nl": "Nederlands", "de": "Deutsch", "fr": "Français"} %}
{% set fields = [
  {"name": "title", "label": N_("Title"), "rows": 0},
  {"name": "summary", "label": N_("Summary"), "rows": 3},
  {"name": "body", "label": N_("Body (HTML)"), "rows": 10},
  {"name": "slug", "label": N_("Slug"), "rows": 0},
] %}
{% block title %}{% if r %}{{ _("Translations of {title}", title=r.title or _("(untitled)")) }}{% else %}{{ _("Not found") }}{% endif %}{% endblock %}
{% block content %}
{% if not r %}
<h1>{{ _("Not found") }}</h1>
<p>{{ _("There is no resource {id}, or you may not see it.", id=id) }} <a href="/admin/resources">{{ _("Back to the list") }}</a>.</p>
{% elif not m.acl.may("update", r.id) %}
<h1>{{ r.title or _("(untitled)") }}</h1>
<p>{{ _("You may see this {category} but not change it.", category=r.category) }}</p>
{% else %}
<h1>{{ _("Translations of") }} <a href="/admin/edit/{{ r.id }}">{{ r.title or _("(untitled)") }}</a></h1>
<p class="page-head">{% if r.published %}<span class="badge published">{{ _("published") }}</span>{% else %}<span class="badge draft">{{ _("draft") }}</span>{% endif %} <a href="/admin/edit/{{ r.id }}">{{ _("Back to the editor") }}</a></p>
<p id="missing-summary" class="hint" role="status" aria-live="polite"></p>
<p id="restored" class="notice" role="status" hidden></p>
<form id="translations" class="translations" data-id="{{ r.id }}" data-version="{{ r.version }}" data-languages="{{ site.languages|join(',') }}">
  <fieldset class="published-in">
    <legend>{{ _("Published in") }}</legend>
    {% for lang in site.languages %}
    <label><input type="checkbox" name="published-in" value="{{ lang }}"{% if r.is_published_in(lang) %} checked{% endif %}> {{ names[lang] or lang }}</label>
    {% endfor %}
    <small>{{ _("A language left out is still a draft there: the sitemap leaves it out, and its page follows the site's rule (a fallback language, or not found).") }}</small>
  </fieldset>
  <div class="translation-copy" role="group" aria-label="{{ _("Start a language from another") }}">
  {% for lang in site.languages %}
    <p><label for="copy-{{ lang }}">{{ _("Fill the empty {language} fields from", language=names[lang] or lang) }}</label>
      <select id="copy-{{ lang }}" data-copy-to="{{ lang }}">{% for other in site.languages if other != lang %}<option value="{{ other }}">{{ names[other] or other }}</option>{% endfor %}</select>
      <button type="button" class="button secondary" data-copy="{{ lang }}">{{ _("Copy") }}</button></p>
  {% endfor %}
  </div>
  {% for f in fields %}
  <fieldset class="side-by-side">
    <legend>{{ _(f.label) }}</legend>
    {% for lang in site.languages %}
    {# A text the same in every language shows in the first language only. #}
    {% set own = r.translation(f.name, lang) if r.is_translated(f.name) or loop.first else "" %}
    <p class="cell" lang="{{ lang }}">
      <label for="{{ f.name }}-{{ lang }}">{{ names[lang] or lang }}</label>
      <span class="badge draft missing" id="{{ f.name }}-{{ lang }}-missing"{% if own %} hidden{% endif %}>{{ _("missing") }}</span><br>
      {% if f.rows %}<textarea id="{{ f.name }}-{{ lang }}" data-field="{{ f.name }}" data-language="{{ lang }}" rows="{{ f.rows }}" aria-describedby="{{ f.name }}-{{ lang }}-missing">
{{ (own or "")|source }}</textarea>
      {% else %}<input id="{{ f.name }}-{{ lang }}" data-field="{{ f.name }}" data-language="{{ lang }}" value="{{ (own or "")|source }}" aria-describedby="{{ f.name }}-{{ lang }}-missing">{% endif %}
    </p>
    {% endfor %}
  </fieldset>
  {% endfor %}
  <p class="actions"><button type="submit" class="button">{{ _("Save every language") }}</button>
    <span id="status" class="message" role="status" aria-live="polite"></span></p>
</form>
{% endif %}
{% endblock %}
{% block scripts %}{% if r and m.acl.may("update", r.id) %}{{ lib("js/admin-translate.js") }}{% endif %}{% endblock %}
