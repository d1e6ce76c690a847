{% from "_text.tpl" import texts %}{% set t = texts[m.req.language] %}{% set page_title = t.projects %}
{% include "_header.tpl" %}
<h1>{{ t.projects }}</h1>
<p class="hint">{{ t.pick_hint }} <span id="picked" data-label="{{ t.picked }}">0 {{ t.picked }}</span></p>
<nav class="filter" aria-label="themes">
  <a href="{{ url('projects') }}" data-theme="" class="current">{{ t.all }}</a>
  <a href="{{ url('projects') }}?theme=project_nature" data-theme="project_nature">{{ "Natuur" if m.req.language == "nl" else "Nature" }}</a>
  <a href="{{ url('projects') }}?theme=project_culture" data-theme="project_culture">{{ "Cultuur" if m.req.language == "nl" else "Culture" }}</a>
  <a href="{{ url('projects') }}?theme=project_care" data-theme="project_care">{{ "Zorg" if m.req.language == "nl" else "Care" }}</a>
  <a href="{{ url('projects') }}?theme=project_sport" data-theme="project_sport">Sport</a>
</nav>
<form id="pick" method="get" action="{{ url('vote') }}">
  <div id="list">{% include "projects_list.tpl" %}</div>
  <button class="button" type="submit">{{ t.next }}</button>
</form>
{{ lib("js/voting.js") }}
{% include "_footer.tpl" %}
