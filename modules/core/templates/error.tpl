<!doctype html>
<html lang="{{ language or "en" }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ status }} {{ reason }}</title>
{{ lib("css/bulwark.css") }}
</head>
<body class="bulwark-error">
<h1>{{ status }} {{ reason }}</h1>
<p>{% if why %}{{ why }}{% elif status == 404 %}{{ _("The page you asked for is not here.") }}{% elif status == 403 %}{{ _("You may not see this page. If you should, log on with an account that may.") }}{% elif status >= 500 %}{{ _("Something went wrong on our side. Please try again in a moment.") }}{% else %}{{ _("The request could not be served.") }}{% endif %}</p>
<p><a href="/">{{ _("Home") }}</a></p>
</body>
</html>
