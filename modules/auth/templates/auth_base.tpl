{# The frame of the accounts pages: a site overrides this one file to give
   them its own look (the starter site extends its base.tpl). #}
<!doctype html>
<html lang="{{ request.language }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}{{ _("Account") }}{% endblock %}</title>
{{ lib("css/bulwark.css") }}
{% block head %}<meta name="robots" content="noindex">{% endblock %}
</head>
<body>
<main class="wrap">
{% block content %}{% endblock %}
</main>
</body>
</html>
