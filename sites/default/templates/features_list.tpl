{% set features = [
  {"slug": "depcache", "title": N_("Dependency cache"), "text": N_("Pages and fragments are cached with the data they showed; a change flushes exactly what it affects.")},
  {"slug": "coalescing", "title": N_("Request coalescing"), "text": N_("A thousand visitors asking for the same missing page cause one render, not a thousand.")},
  {"slug": "static", "title": N_("Static files built in"), "text": N_("CSS and JavaScript are combined, compressed once and cached by browsers for a year.")},
  {"slug": "bottlenecks", "title": N_("503, not a crash"), "text": N_("Expensive work waits in short queues with deadlines; overload is answered, never fatal.")},
  {"slug": "push", "title": N_("Push to browsers"), "text": N_("Topics, WebSocket and long-poll in the same process: pages update as data changes.")},
  {"slug": "sites", "title": N_("Many sites, one process"), "text": N_("Each site is a folder: templates, static files and a site.toml, chosen by host name.")},
] %}
