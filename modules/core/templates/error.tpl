<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ status }} {{ reason }}</title>
{{ lib("css/bulwark.css") }}
</head>
<body class="bulwark-error">
<h1>{{ status }} {{ reason }}</h1>
<p>{% if status == 404 %}The page you asked for is not here.{% elif status == 403 %}You may not do this. If you sent a form, it may have expired or not come from this site: reload the page and try again.{% elif status >= 500 %}Something went wrong on our side. Please try again in a moment.{% else %}The request could not be served.{% endif %}</p>
<p><a href="/">Home</a></p>
</body>
</html>
