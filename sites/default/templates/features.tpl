{% extends "base.tpl" %}
{% from "_macros.tpl" import card %}
{% from "features_list.tpl" import features %}
{% block title %}{{ _("Features") }} &middot; {{ super() }}{% endblock %}
{% block content %}
<h1>{{ _("Features") }}</h1>
<section class="grid">
{% for f in features %}
  {{ card(_(f.title), _(f.text), url("feature", f.slug), 2) }}
{% endfor %}
</section>
{% endblock %}
