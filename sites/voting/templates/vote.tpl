{#- The voter's form (the voting module's `vote` controller): `picks` (ids),
    `typed` (what was typed), `errors` (field -> code), `ballot` and
    `ballot_field` (the form's signed token). -#}
{% from "_text.tpl" import error_texts %}{% set page_title = _("Your details") %}
{% include "_header.tpl" %}
{% if errors.form %}<p class="error" role="alert" id="error-form">{{ _(error_texts["form." ~ errors.form]) }}</p>{% endif %}
{% if errors.picks %}
<p class="error" role="alert" id="error-picks">{{ _(error_texts["picks." ~ errors.picks]) }}</p>
<p><a class="button" href="{{ url('projects') }}">{{ _("Back to the projects") }}</a></p>
{% else %}
<h1>{{ _("Your three projects") }}</h1>
<ul class="picks">
{% for id in picks %}{% set p = m.rsc[id] %}
  <li><img src="{{ lib(p.image) }}" alt="" width="160" height="90"> {{ p.title }}</li>
{% endfor %}
</ul>
<p><a href="{{ url('projects') }}">{{ _("Choose other projects") }}</a></p>
<h2>{{ _("Your details") }}</h2>
<form method="post" action="{{ url('vote') }}" class="form" novalidate>
  <input type="hidden" name="{{ ballot_field }}" value="{{ ballot }}">
  {% for id in picks %}<input type="hidden" name="p" value="{{ id }}">{% endfor %}
  {% for field, kind, auto, label in [("name", "text", "name", N_("Name")), ("email", "email", "email", N_("E-mail address")), ("postcode", "text", "postal-code", N_("Postcode"))] %}
  <p class="field{% if errors[field] %} invalid{% endif %}">
    <label for="{{ field }}">{{ _(label) }}</label>
    <input id="{{ field }}" name="{{ field }}" type="{{ kind }}" autocomplete="{{ auto }}" required
           value="{{ typed[field] }}"{% if errors[field] %} aria-invalid="true" aria-describedby="error-{{ field }}"{% endif %}>
    {% if errors[field] %}<span class="error" id="error-{{ field }}">{{ _(error_texts[field ~ "." ~ errors[field]]) }}</span>{% endif %}
  </p>
  {% endfor %}
  <button class="button" type="submit">{{ _("Cast my vote") }}</button>
</form>
{% endif %}
{% include "_footer.tpl" %}
