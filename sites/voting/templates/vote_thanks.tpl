{% from "_text.tpl" import texts, title %}{% set t = texts[m.req.language] %}{% set page_title = t.thanks %}
{% include "_header.tpl" %}
<h1 id="thanks">{{ t.thanks }}, {{ name }}</h1>
<p>{{ t.thanks_lead }}</p>
<ul class="picks">
{% for id in picks %}{% set p = m.rsc[id] %}
  <li><img src="{{ lib(p.image) }}" alt="" width="160" height="90"> {{ title(p, m.req.language) }}</li>
{% endfor %}
</ul>
{% include "_footer.tpl" %}
