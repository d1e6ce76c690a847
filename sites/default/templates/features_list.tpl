{% set features = [
  {"slug": "depcache", "title": "Dependency cache", "text": "Pages and fragments are cached with the data they showed; a change flushes exactly what it affects."},
  {"slug": "coalescing", "title": "Request coalescing", "text": "A thousand visitors asking for the same missing page cause one render, not a thousand."},
  {"slug": "static", "title": "Static files built in", "text": "CSS and JavaScript are combined, compressed once and cached by browsers for a year."},
  {"slug": "bottlenecks", "title": "503, not a crash", "text": "Expensive work waits in short queues with deadlines; overload is answered, never fatal."},
  {"slug": "push", "title": "Push to browsers", "text": "Topics, WebSocket and long-poll in the same process: pages update as data changes."},
  {"slug": "sites", "title": "Many sites, one process", "text": "Each site is a folder: templates, static files and a site.toml, chosen by host name."},
] %}
