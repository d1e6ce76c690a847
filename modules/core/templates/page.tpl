<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ rsc.title }}</title>
{{ lib("css/bulwark.css") }}
</head>
<body class="bulwark-page">
<article>
<h1>{{ rsc.title }}</h1>
{% if rsc.summary %}<p><strong>{{ rsc.summary }}</strong></p>{% endif %}
{{ embeds(pictures(rsc.body)) if pictures is defined else rsc.body }}
</article>
</body>
</html>
