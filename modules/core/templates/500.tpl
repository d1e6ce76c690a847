{% include "error.tpl" %}
