{#- The voter's form (the voting module's `vote` controller): `picks` (ids),
    `typed` (what was typed), `errors` (field -> code), `ballot` and
    `ballot_field` (the form's signed token). -#}
{% from "_text.tpl" import texts, title %}{% set t = texts[m.req.language] %}{% set page_title = t.details %}
{% include "_header.tpl" %}
{% if errors.form %}<p class="error" role="alert" id="error-form">{{ t.errors["form." ~ errors.form] }}</p>{% endif %}
{% if errors.picks %}
<p class="error" role="alert" id="error-picks">{{ t.errors["picks." ~ errors.picks] }}</p>
<p><a class="button" href="{{ url('projects') }}">{{ t.back }}</a></p>
{% else %}
<h1>{{ t.your_picks }}</h1>
<ul class="picks">
{% for id in picks %}{% set p = m.rsc[id] %}
  <li><img src="{{ lib(p.image) }}" alt="" width="160" height="90"> {{ title(p, m.req.language) }}</li>
{% endfor %}
</ul>
<p><a href="{{ url('projects') }}">{{ t.change }}</a></p>
<h2>{{ t.details }}</h2>
<form method="post" action="{{ url('vote') }}" class="form" novalidate>
  <input type="hidden" name="{{ ballot_field }}" value="{{ ballot }}">
  {% for id in picks %}<input type="hidden" name="p" value="{{ id }}">{% endfor %}
  {% for field, kind, auto in [("name", "text", "name"), ("email", "email", "email"), ("postcode", "text", "postal-code")] %}
  <p class="field{% if errors[field] %} invalid{% endif %}">
    <label for="{{ field }}">{{ t[field] }}</label>
    <input id="{{ field }}" name="{{ field }}" type="{{ kind }}" autocomplete="{{ auto }}" required
           value="{{ typed[field] }}"{% if errors[field] %} aria-invalid="true" aria-describedby="error-{{ field }}"{% endif %}>
    {% if errors[field] %}<span class="error" id="error-{{ field }}">{{ t.errors[field ~ "." ~ errors[field]] }}</span>{% endif %}
  </p>
  {% endfor %}
  <button class="button" type="submit">{{ t.vote }}</button>
</form>
{% endif %}
{% include "_footer.tpl" %}
