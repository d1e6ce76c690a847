{#- The projects of one theme (?theme=project_nature), or all: the page's list,
    and the filter's Ajax answer on its own. -#}
{% from "_text.tpl" import texts, title, summary %}{% set t = texts[m.req.language] %}
{% set themes = ["project_nature", "project_culture", "project_care", "project_sport"] %}
{% set cat = q.theme if q.theme in themes else "project" %}
<ul class="projects" data-theme="{{ cat }}">
{% for p in m.search(cat=cat, sort="title", pagelen=50) %}
  <li class="project" data-id="{{ p.id }}">
    <label>
      <img src="{{ lib(p.image) }}" alt="" width="320" height="180" loading="lazy">
      <input type="checkbox" name="p" value="{{ p.id }}">
      <strong>{{ title(p, m.req.language) }}</strong>
    </label>
    <p>{{ summary(p, m.req.language) }} <a href="{{ url('project', p.id) }}">{{ t.read_more }}</a></p>
  </li>
{% endfor %}
</ul>
