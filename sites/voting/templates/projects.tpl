{% set page_title = _("The projects") %}
{% include "_header.tpl" %}
<h1>{{ _("The projects") }}</h1>
<p class="hint">{{ _("Choose exactly three.") }} <span id="picked" data-label="{{ _("chosen") }}">0 {{ _("chosen") }}</span></p>
<nav class="filter" aria-label="themes">
  <a href="{{ url('projects') }}" data-theme="" class="current">{{ _("All") }}</a>
  <a href="{{ url('projects') }}?theme=project_nature" data-theme="project_nature">{{ _("Nature") }}</a>
  <a href="{{ url('projects') }}?theme=project_culture" data-theme="project_culture">{{ _("Culture") }}</a>
  <a href="{{ url('projects') }}?theme=project_care" data-theme="project_care">{{ _("Care") }}</a>
  <a href="{{ url('projects') }}?theme=project_sport" data-theme="project_sport">{{ _("Sport") }}</a>
</nav>
<form id="pick" method="get" action="{{ url('vote') }}">
  <div id="list">{% include "projects_list.tpl" %}</div>
  <button class="button" type="submit">{{ _("Next") }}</button>
</form>
{{ lib("js/voting.js") }}
{% include "_footer.tpl" %}
