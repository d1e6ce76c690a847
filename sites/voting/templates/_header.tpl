<!doctype html>
<html lang="{{ m.req.language }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% if page_title %}{{ page_title }} &middot; {% endif %}{{ _("Vote for a better Netherlands") }}</title>
{{ lib("css/voting.css") }}
</head>
<body>
<header class="top">
  <a class="brand" href="{{ url('home') }}"><img src="{{ lib('images/logo.svg') }}" alt="" width="32" height="32"> {{ _("Vote for a better Netherlands") }}</a>
</header>
<main>
