{% set page_title = _("Thank you for voting") %}
{% include "_header.tpl" %}
<h1 id="thanks">{{ _("Thank you for voting") }}, {{ name }}</h1>
<p>{{ _("Your vote was counted. You chose:") }}</p>
<ul class="picks">
{% for id in picks %}{% set p = m.rsc[id] %}
  <li><img src="{{ lib(p.image) }}" alt="" width="160" height="90"> {{ p.title }}</li>
{% endfor %}
</ul>
{% include "_footer.tpl" %}
