{% from "_text.tpl" import texts %}{% set t = texts[m.req.language] %}
{% include "_header.tpl" %}
<section class="hero">
  <h1>{{ t.site }}</h1>
  <p class="lead">{{ t.lead }}</p>
  <p><a class="button" href="{{ url('projects') }}">{{ t.start }}</a></p>
</section>
<section>
  <h2>{{ t.how }}</h2>
  <ol class="steps"><li>{{ t.how1 }}</li><li>{{ t.how2 }}</li><li>{{ t.how3 }}</li></ol>
</section>
{% include "_footer.tpl" %}
