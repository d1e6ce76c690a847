{% from "_text.tpl" import texts, title, summary %}{% set t = texts[m.req.language] %}
{% set p = m.rsc[id] %}
{% if not p or not p.is_a("project") %}{{ not_found() }}{% endif %}
{% set page_title = title(p, m.req.language) %}
{% include "_header.tpl" %}
<article class="project-page">
  <img src="{{ lib(p.image) }}" alt="" width="640" height="360">
  <h1>{{ title(p, m.req.language) }}</h1>
  <p class="lead">{{ summary(p, m.req.language) }}</p>
  <p><a href="{{ url('projects') }}">{{ t.back }}</a></p>
</article>
{% include "_footer.tpl" %}
