<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ status }} {{ reason }}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:2rem;margin:0 0 .5rem}p{color:#555}
</style>
</head>
<body>
<h1>{{ status }} {{ reason }}</h1>
<p>{% if status == 404 %}The page you asked for is not here.{% elif status >= 500 %}Something went wrong on our side. Please try again in a moment.{% else %}The request could not be served.{% endif %}</p>
<p><a href="/">Home</a></p>
</body>
</html>
