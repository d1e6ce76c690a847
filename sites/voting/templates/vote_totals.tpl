{#- Administrators: the totals (`votes`, `totals` as {id, votes}), kept up to
    date over push (`topic` hears each vote's three projects). -#}
{% set page_title = _("Totals so far") %}
{% include "_header.tpl" %}
<h1>{{ _("Totals so far") }}</h1>
<p><strong id="votes">{{ votes }}</strong> {{ _("votes") }} <span class="hint" id="push-state"></span></p>
<table class="totals" id="totals" data-topic="{{ topic }}">
{% for row in totals %}{% set p = m.rsc[row.id] %}
  <tr data-project="{{ row.id }}"><td>{{ p.title }}</td><td class="n">{{ row.votes }}</td></tr>
{% endfor %}
{% for p in m.search(cat="project", sort="title", pagelen=50) %}{% if p.id not in totals|map(attribute="id") %}
  <tr data-project="{{ p.id }}"><td>{{ p.title }}</td><td class="n">0</td></tr>
{% endif %}{% endfor %}
</table>
{{ lib("js/bulwark.js", "js/totals.js") }}
{% include "_footer.tpl" %}
