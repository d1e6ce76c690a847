{% set p = m.rsc[id] %}
{% if not p or not p.is_a("project") %}{{ not_found() }}{% endif %}
{% set page_title = p.title %}
{% include "_header.tpl" %}
<article class="project-page">
  <img src="{{ lib(p.image) }}" alt="" width="640" height="360">
  <h1>{{ p.title }}</h1>
  <p class="lead">{{ p.summary }}</p>
  <p><a href="{{ url('projects') }}">{{ _("Back to the projects") }}</a></p>
</article>
{% include "_footer.tpl" %}
