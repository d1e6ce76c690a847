<html>
<head>
<title>{% block title %}Loadtest{% endblock %}</title>
</head>
<body>
{% block body %}{% endblock %}
</body>
</html>
