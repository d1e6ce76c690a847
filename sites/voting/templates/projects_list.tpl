{#- The projects of one theme (?theme=project_nature), or all: the page's list,
    and the filter's Ajax answer on its own. -#}

{% set themes = ["project_nature", "project_culture", "project_care", "project_sport"] %}
{% set cat = q.theme if q.theme in themes else "project" %}
<ul class="projects" data-theme="{{ cat }}">
{% for p in m.search(cat=cat, sort="title", pagelen=50) %}
  <li class="project" data-id="{{ p.id }}">
    <label>
      <img src="{{ lib(p.image) }}" alt="" width="320" height="180" loading="lazy">
      <input type="checkbox" name="p" value="{{ p.id }}">
      <strong>{{ p.title }}</strong>
    </label>
    <p>{{ p.summary }} <a href="{{ url('project', p.id) }}">{{ _("Read more") }}</a></p>
  </li>
{% endfor %}
</ul>
