{# A form an editor built (the forms module):
     {% set form = m.forms("contact") %}{% include "_form.tpl" %}
   `values` (what was typed, by field: a list) and `errors` (by field) come
   when the form is shown again. The page stays one cached copy for every
   visitor: forms.js asks for the ticket against bots when someone starts. #}
{% if form is defined and form %}
{% set values = values if values is defined and values else {} %}
{% set errors = errors if errors is defined and errors else {} %}
{% if form.error %}
  {% if request.user_id %}<p class="error" role="alert">{{ _("The form “{title}” cannot be shown: {problem}", title=form.title, problem=form.error) }}</p>{% endif %}
{% else %}
<form method="post" action="{{ form.action }}" class="form site-form" data-site-form data-ticket-for="form:{{ form.id }}"{% if form.multipart %} enctype="multipart/form-data"{% endif %} novalidate>
  <input type="hidden" name="_ticket" value="{{ ticket if ticket is defined and ticket else '' }}">
  <div class="form-hp" aria-hidden="true"><label>{{ _("Leave this empty") }} <input name="extra_info" tabindex="-1" autocomplete="off"></label></div>
  {% if request.user_id %}{{ csrf_field() }}{% endif %}
  {% if errors %}<p class="error" role="alert" id="form-{{ form.id }}-problems">{{ _("Some answers are missing or wrong: see below.") }}</p>{% endif %}
  {% for f in form.fields %}
  {% set id = "f" ~ form.id ~ "-" ~ f.name %}
  {% set typed = values[f.name] if f.name in values else [] %}
  {% set described = (id ~ "-help " if f.help else "") ~ (id ~ "-error" if f.name in errors else "") %}
  <div class="field field-{{ f.type }}{% if f.name in errors %} has-error{% endif %}">
  {% if f.type in ["choice", "multiple"] %}
    <fieldset{% if described %} aria-describedby="{{ described|trim }}"{% endif %}>
      <legend>{{ f.label }}{% if f.required %} <span class="required">{{ _("(required)") }}</span>{% endif %}</legend>
      {% for option in f.options %}
      <label class="check"><input type="{{ 'radio' if f.type == 'choice' else 'checkbox' }}" name="{{ f.name }}" value="{{ option }}"{% if option in typed %} checked{% endif %}{% if f.required and f.type == 'choice' %} required{% endif %}> {{ option }}</label>
      {% endfor %}
    </fieldset>
  {% elif f.type == "checkbox" %}
    <label class="check"><input type="checkbox" id="{{ id }}" name="{{ f.name }}" value="yes"{% if typed %} checked{% endif %}{% if f.required %} required{% endif %}{% if described %} aria-describedby="{{ described|trim }}"{% endif %}{% if f.name in errors %} aria-invalid="true"{% endif %}> {{ f.label }}{% if f.required %} <span class="required">{{ _("(required)") }}</span>{% endif %}</label>
  {% else %}
    <label for="{{ id }}">{{ f.label }}{% if f.required %} <span class="required">{{ _("(required)") }}</span>{% endif %}</label>
    {% if f.type == "textarea" %}
    <textarea id="{{ id }}" name="{{ f.name }}" rows="6" maxlength="10000"{% if f.required %} required{% endif %}{% if described %} aria-describedby="{{ described|trim }}"{% endif %}{% if f.name in errors %} aria-invalid="true"{% endif %}>{{ typed[0] if typed else '' }}</textarea>
    {% elif f.type == "file" %}
    <input id="{{ id }}" type="file" name="{{ f.name }}"{% if f.required %} required{% endif %}{% if described %} aria-describedby="{{ described|trim }}"{% endif %}{% if f.name in errors %} aria-invalid="true"{% endif %}>
    {% else %}
    <input id="{{ id }}" name="{{ f.name }}" type="{{ {'text': 'text', 'email': 'email', 'number': 'number', 'date': 'date'}[f.type] }}"{% if f.type == "text" %} maxlength="500"{% endif %}{% if f.type == "email" %} autocomplete="email"{% endif %}{% if f.type == "number" %} step="any"{% if f.min is not none and f.min is defined %} min="{{ f.min }}"{% endif %}{% if f.max is not none and f.max is defined %} max="{{ f.max }}"{% endif %}{% endif %} value="{{ typed[0] if typed else '' }}"{% if f.required %} required{% endif %}{% if described %} aria-describedby="{{ described|trim }}"{% endif %}{% if f.name in errors %} aria-invalid="true"{% endif %}>
    {% endif %}
  {% endif %}
  {% if f.help %}<small id="{{ id }}-help" class="help">{{ f.help }}</small>{% endif %}
  {% if f.name in errors %}<p id="{{ id }}-error" class="field-error">{{ errors[f.name] }}</p>{% endif %}
  </div>
  {% endfor %}
  {# The label the form's editor chose (default "Send", translated in the
     module's catalog; a site's catalog may translate its own), its braces
     doubled so that _() shows them as they are. #}
  <button type="submit" class="button">{{ _(form.submit|replace("{", "{{")|replace("}", "}}")) }}</button>
</form>
{{ lib("css/forms.css", "js/forms.js") }}
{% endif %}
{% endif %}
