{% extends "admin_base.tpl" %}
{% set r = m.rsc[id] %}
{% block title %}{% if r %}{{ _("Edit {title}", title=r.title or _("(untitled)")) }}{% else %}{{ _("Not found") }}{% endif %}{% endblock %}
{% block content %}
{% if not r %}
<h1>{{ _("Not found") }}</h1>
<p>{{ _("There is no resource {id}, or you may not see it.", id=id) }} <a href="/admin/resources">{{ _("Back to the list") }}</a>.</p>
{% elif not m.acl.may("update", r.id) %}
<h1>{{ r.title or _("(untitled)") }}</h1>
<p>{{ _("You may see this {category} but not change it.", category=r.category) }} <a href="{{ r.page_url }}">{{ _("View it") }}</a>.</p>
{% else %}
<h1>{{ _("Edit:") }} <span id="heading">{{ r.title or _("(untitled)") }}</span></h1>
{% set state = r.publication_state %}
<p class="page-head"><span id="state" class="badge {{ state }}" role="status">{{ _(state) }}{% if state in ["scheduled", "ended"] %}{% set moment = r.publication_start if state == "scheduled" else r.publication_end %} <time datetime="{{ moment }}">{{ moment|date("%-d %b %Y, %H:%M UTC") }}</time>{% endif %}</span>
  <span>{{ r.category }}</span> <span>{{ _("changed") }} <time datetime="{{ r.modified }}">{{ r.modified }}</time></span>
  <a id="page-link" href="{{ r.page_url }}">{{ _("View the page") }}</a>
  {% if site.languages|length > 1 %}<a id="translations-link" href="/admin/translate/{{ r.id }}">{{ _("Translations") }}</a>{% endif %}
  <button type="button" id="preview-toggle" aria-expanded="false" aria-controls="preview">{{ _("Preview") }}</button></p>
<p id="others" class="notice" role="status" aria-live="polite" hidden></p>
<div id="preview" hidden><iframe title="{{ _("Preview of the page") }}" id="preview-frame" loading="lazy"></iframe></div>
{# A text translated into several languages is edited here in the admin's
   language (the others stay as they are: Translations shows them all). #}
{% set lang = m.req.language %}
<form id="editor" class="editor" data-id="{{ r.id }}" data-version="{{ r.version }}" data-csrf="{{ request.csrf_token }}" data-page="{{ r.page_url }}" data-language="{{ lang }}" data-translated="{% for f in ["title", "summary", "body", "slug"] if r.is_translated(f) %}{{ f }} {% endfor %}">
  <p><label for="title">{{ _("Title") }}</label><br>
     <input id="title" name="title" value="{{ ((r.translation("title", lang) if r.is_translated("title") else r.title) or '')|source }}" required size="60">
     {% if r.is_translated("title") %}<br><small>{{ _("In {language}; every language side by side:", language=lang) }} <a href="/admin/translate/{{ r.id }}">{{ _("Translations") }}</a>.</small>{% endif %}</p>
  <p><label for="summary">{{ _("Summary") }}</label><br>
     <textarea id="summary" name="summary" rows="3" cols="60">
{{ ((r.translation("summary", lang) if r.is_translated("summary") else r.summary) or '')|source }}</textarea></p>
  {% if r.category == "image" %}
  <p><label for="alt">{{ _("Text for those who cannot see it") }}</label><br>
     <input id="alt" name="alt" value="{{ (r.alt or '')|source }}" size="60" maxlength="300" aria-describedby="alt-help">
     <br><small id="alt-help">{{ _("What the picture shows, in a sentence: pages use it wherever the picture appears, instead of its title.") }}</small></p>
  <p><label for="description">{{ _("Description") }}</label><br>
     <textarea id="description" name="description" rows="3" cols="60">
{{ (r.description or '')|source }}</textarea></p>
  {% endif %}
  <div class="field">
    <span id="body-label">{{ _("Body") }}</span>
    <div class="toolbar" role="toolbar" aria-label="{{ _("Formatting") }}" aria-controls="body-editor" hidden>
      <select data-command="block" aria-label="{{ _("Text style") }}">
        <option value="P">{{ _("Paragraph") }}</option>
        <option value="H2">{{ _("Heading") }}</option>
        <option value="H3">{{ _("Subheading") }}</option>
        <option value="H4">{{ _("Minor heading") }}</option>
      </select>
      <button type="button" data-command="bold" aria-pressed="false" aria-label="{{ _("Bold") }}" title="{{ _("Bold (Ctrl+B)") }}"><b>B</b></button>
      <button type="button" data-command="italic" aria-pressed="false" aria-label="{{ _("Italic") }}" title="{{ _("Italic (Ctrl+I)") }}"><i>I</i></button>
      <button type="button" data-command="ul" aria-pressed="false" aria-label="{{ _("Bulleted list") }}">&bull; {{ _("Bulleted") }}</button>
      <button type="button" data-command="ol" aria-pressed="false" aria-label="{{ _("Numbered list") }}">{{ _("Numbered") }}</button>
      <button type="button" data-command="quote" aria-pressed="false" aria-label="{{ _("Quote") }}">&ldquo; {{ _("Quote") }}</button>
      <button type="button" data-command="rule" aria-label="{{ _("Dividing line") }}" title="{{ _("A line between two parts") }}">&mdash;</button>
      <button type="button" data-command="link" aria-pressed="false" aria-label="{{ _("Link") }}" aria-haspopup="dialog" title="{{ _("Link (Ctrl+K)") }}">{{ _("Link") }}</button>
      {% if "media" in site_modules %}<button type="button" data-command="picture" aria-label="{{ _("Insert a picture") }}" aria-haspopup="dialog">{{ _("Picture") }}</button>{% endif %}
      {% if "media" in site_modules %}<button type="button" data-command="embed" aria-label="{{ _("Embed a video") }}" aria-haspopup="dialog">{{ _("Video") }}</button>{% endif %}
      <button type="button" data-command="source" aria-pressed="false" aria-label="{{ _("Edit the HTML source") }}">HTML</button>
    </div>
    <div id="body-editor" class="rich" role="textbox" aria-multiline="true" aria-labelledby="body-label" hidden></div>
    <textarea id="body" name="body" rows="12" cols="60" aria-labelledby="body-label">
{{ ((r.translation("body", lang) if r.is_translated("body") else r.body) or '')|source }}</textarea>
  </div>
  <div class="columns">
    <p><label for="category">{{ _("Category") }}</label><br>
      <select id="category" name="category">
        {% for c in m.category %}<option value="{{ c.name }}"{% if c.name == r.category %} selected{% endif %}>{{ "– " * c.depth }}{{ c.name }}</option>{% endfor %}
      </select></p>
    <p><label for="name">{{ _("Unique name") }}</label><br>
      <input id="name" name="name" value="{{ r.name or '' }}" size="24" pattern="[a-z0-9_]*" title="{{ _("a-z, 0-9 and _") }}" aria-describedby="name-help">
      <br><small id="name-help">{{ _("Optional: for templates,") }} <code>m.rsc.the_name</code>.</small></p>
    <p><label for="slug">{{ _("URL slug") }}</label><br>
      <input id="slug" name="slug" value="{{ ((r.translation("slug", lang) if r.is_translated("slug") else r.own_slug) or '')|source }}" placeholder="{{ r.slug }}" size="30" aria-describedby="slug-help">
      <br><small id="slug-help">{{ _("Empty: made from the title.") }}</small></p>
  </div>
  <fieldset class="columns">
    <legend>{{ _("Publication") }}</legend>
    <p><label><input id="published" name="published" type="checkbox"{% if r.published %} checked{% endif %}> {{ _("Published") }}</label></p>
    <p><label for="publication_start">{{ _("From") }}</label><br>
      <input id="publication_start" name="publication_start" type="datetime-local" data-utc="{{ r.publication_start or '' }}"></p>
    <p><label for="publication_end">{{ _("Until") }}</label><br>
      <input id="publication_end" name="publication_end" type="datetime-local" data-utc="{{ r.publication_end or '' }}"></p>
    <p><label for="visibility">{{ _("Who may see it") }}</label><br>
      <select id="visibility" name="visibility">
        <option value="public"{% if r.visibility == "public" %} selected{% endif %}>{{ _("everyone") }}</option>
        <option value="members"{% if r.visibility == "members" %} selected{% endif %}>{{ _("members") }}</option>
        {% for g in m.search(cat="content_group", sort="title", pagelen=100) %}
        <option value="group:{{ g.id }}"{% if r.content_group == g.id %} selected{% endif %}>{{ _("content group: {name}", name=g.title or g.name) }}</option>
        {% endfor %}
      </select></p>
  </fieldset>
  <div class="savebar">
    <button type="submit" class="primary" aria-keyshortcuts="Control+S">{{ _("Save") }}</button>
    <button type="button" id="publish-now"{% if r.published %} hidden{% endif %}>{{ _("Save and publish") }}</button>
    <p id="status" role="status" aria-live="polite"></p>
  </div>
  <div id="draft" class="notice" role="region" aria-labelledby="draft-title" hidden>
    <p id="draft-title"></p>
    <p><button type="button" id="draft-restore" class="primary">{{ _("Restore them") }}</button> <button type="button" id="draft-discard">{{ _("Discard them") }}</button></p>
  </div>
  <div id="conflict" class="notice" role="region" aria-labelledby="conflict-title" hidden>
    <h2 id="conflict-title">{{ _("Someone else saved this while you were writing") }}</h2>
    <p>{{ _("Nothing you wrote is lost: it is still in the form. What they saved (struck through) against what you have (underlined):") }}</p>
    <div id="conflict-diff" class="diff"></div>
    <p><button type="button" id="conflict-mine" class="primary">{{ _("Save mine over theirs") }}</button> <button type="button" id="conflict-theirs">{{ _("Take theirs, drop mine") }}</button></p>
  </div>
</form>

<dialog id="link-dialog" class="dialog" aria-labelledby="link-title">
  <form method="dialog" id="link-form">
    <h2 id="link-title">{{ _("Link") }}</h2>
    <p><label for="link-url">{{ _("A page of this site, or an address") }}</label><br>
      <input id="link-url" name="url" size="44" autocomplete="off" aria-describedby="link-help" aria-controls="link-found">
      <br><small id="link-help">{{ _("Type words of a page's title to find it, or a web address (https://…), an e-mail address or an anchor (#part).") }}</small></p>
    <ul id="link-found" class="found plain" aria-label="{{ _("Pages found") }}"></ul>
    <p id="link-status" class="message" role="status" aria-live="polite"></p>
    <p class="actions"><button type="submit" value="set" class="primary">{{ _("Set the link") }}</button>
      <button type="submit" value="remove" id="link-remove" hidden>{{ _("Remove the link") }}</button>
      <button type="submit" value="cancel" formnovalidate>{{ _("Cancel") }}</button></p>
  </form>
</dialog>

{% if "media" in site_modules %}
<dialog id="embed-dialog" class="dialog" aria-labelledby="embed-title">
  <form method="dialog" id="embed-form">
    <h2 id="embed-title">{{ _("Embed a video") }}</h2>
    <p><label for="embed-url">{{ _("The video's address") }}</label><br>
      <input id="embed-url" name="url" type="url" size="44" autocomplete="off" aria-describedby="embed-help">
      <br><small id="embed-help">{{ _("A video on YouTube or Vimeo (https://youtu.be/…, https://vimeo.com/…). Visitors see its player; a feed or an export, the link.") }}</small></p>
    <p><label for="embed-caption">{{ _("Caption (optional, shown below it)") }}</label><br>
      <input id="embed-caption" size="44" maxlength="300"></p>
    <p id="embed-status" class="message" role="status" aria-live="polite"></p>
    <p class="actions"><button type="submit" value="insert" id="embed-insert" class="primary">{{ _("Embed it") }}</button>
      <button type="submit" value="cancel" formnovalidate>{{ _("Cancel") }}</button></p>
  </form>
</dialog>
{% endif %}

{% if "media" in site_modules and r.category == "image" %}
{% set fx = r.focus_x if r.focus_x is number else 0.5 %}{% set fy = r.focus_y if r.focus_y is number else 0.5 %}
<section id="focus" class="editor-section" aria-labelledby="focus-title" data-id="{{ r.id }}">
  <h2 id="focus-title">{{ _("Focal point") }}</h2>
  <p>{{ _("Crops of this picture keep its focal point in view. Click on the picture where it is, or give it in per cent.") }}</p>
  <div class="focus-frame"><img id="focus-image" src="/media/file/{{ r.id }}" alt="{{ r.title or '' }}" width="{{ r.width }}" height="{{ r.height }}">
    <span id="focus-mark" class="focus-mark" hidden></span></div>
  <form id="focus-form" class="columns">
    <p><label for="focus-x">{{ _("From the left (%)") }}</label><br><input id="focus-x" name="x" type="number" min="0" max="100" step="0.1" value="{{ (fx * 100)|round(1) }}"></p>
    <p><label for="focus-y">{{ _("From the top (%)") }}</label><br><input id="focus-y" name="y" type="number" min="0" max="100" step="0.1" value="{{ (fy * 100)|round(1) }}"></p>
    <p><br><button type="submit" class="primary">{{ _("Save the focal point") }}</button></p>
  </form>
  <p id="focus-status" class="message" role="status" aria-live="polite"></p>
  <p id="focus-preview">{{ _("As the thumbnail crops it:") }} {{ image(r.id, "thumbnail") }}</p>
</section>
{% endif %}
{% if "media" in site_modules %}
{% include "_admin_picture_dialog.tpl" %}
{% set pictures = r.o.depiction %}
<section id="depiction" class="editor-section" aria-labelledby="depiction-title" data-id="{{ r.id }}" data-current="{% for p in pictures %}{{ p.id }}{% if not loop.last %},{% endif %}{% endfor %}">
  <h2 id="depiction-title">{{ _("Picture") }}</h2>
  <p id="depiction-status" class="message" role="status" aria-live="polite"></p>
  {% if pictures %}
  <div class="current-picture">{% for p in pictures %}{{ image(p.id, "thumbnail") }}{% endfor %}
    <button type="button" id="depiction-remove" class="danger">{{ _("Remove the picture") }}</button></div>
  {% else %}<p class="muted">{{ _("No picture yet: choose one from the library or upload one.") }}</p>{% endif %}
  <details>
    <summary>{{ _("Choose from the library") }}</summary>
    <ul class="media-grid plain">
    {% for img in m.search(cat="image", sort="-created", pagelen=24) %}
      <li><button type="button" data-pick="{{ img.id }}" aria-label="{{ _("Use {name}", name=img.title or img.id) }}">{{ image(img.id, "thumbnail") }}</button></li>
    {% else %}
      <li class="empty">{{ _("The library has no images yet: upload one below.") }}</li>
    {% endfor %}
    </ul>
  </details>
  <p><label>{{ _("Or upload one") if not pictures else _("Or upload another (the one above stays until you choose)") }} <input id="depiction-file" type="file" accept="image/*"></label>
    <progress id="depiction-progress" max="1" value="0" hidden aria-label="{{ _("Uploading") }}"></progress></p>
</section>
{% endif %}

{# Tags: keywords connected by `subject` (as the WordPress import makes them).
   Typed here, an existing keyword is used and a new one made on Enter. #}
<section id="tags" class="editor-section" aria-labelledby="tags-title" data-id="{{ r.id }}">
  <h2 id="tags-title">{{ _("Tags") }}</h2>
  <ul id="tag-list" class="tags plain" aria-label="{{ _("Tags of this page") }}">
    {% for k in r.o.subject %}<li data-id="{{ k.id }}"><span class="tag">{{ k.title or k.id }}</span> <button type="button" class="remove-tag" aria-label="{{ _("Remove the tag {tag}", tag=k.title or k.id) }}">×</button></li>{% endfor %}
  </ul>
  <p><label for="tag-input">{{ _("Add a tag") }}</label><br>
    <input id="tag-input" list="tag-suggestions" autocomplete="off" maxlength="100" aria-describedby="tag-help">
    <datalist id="tag-suggestions"></datalist><br>
    <small id="tag-help" class="muted">{{ _("Type a tag and press Enter: an existing tag is used, a new one is made.") }}</small></p>
  <p id="tags-status" class="message" role="status" aria-live="polite"></p>
</section>

{# A category's own part of the editor, when a module brings one
   (`_admin_edit_<category>.tpl`: the menu module's menu items). #}
{% include "_admin_edit_" ~ r.category ~ ".tpl" ignore missing %}

<section id="edges" class="editor-section" aria-labelledby="edges-title" data-id="{{ r.id }}">
  <h2 id="edges-title">{{ _("Connections") }}</h2>
  <p id="edges-status" class="message" role="status" aria-live="polite"></p>
  <div id="edge-lists"></div>
  <form id="new-edge" class="stacked">
    <h3>{{ _("Add a connection") }}</h3>
    <label>{{ _("Predicate") }} <select name="predicate" required></select></label>
    <label>{{ _("Find") }} <input name="text" type="search" placeholder="{{ _("words of its title") }}" autocomplete="off"></label>
    <button type="submit">{{ _("Find") }}</button>
    <ul id="edge-candidates" class="plain" aria-label="{{ _("Found") }}"></ul>
  </form>
</section>

<section id="revisions" class="editor-section" aria-labelledby="revisions-title" data-id="{{ r.id }}">
  <h2 id="revisions-title">{{ _("Earlier versions") }}</h2>
  <p id="revisions-status" class="message" role="status" aria-live="polite"></p>
  <p id="revisions-empty" class="muted" hidden>{{ _("None yet: every save keeps the version before it.") }}</p>
  <ol id="revision-list" class="plain"></ol>
  <div id="revision-diff" class="diff" hidden aria-live="polite"></div>
</section>
{% endif %}
{% endblock %}
{% block scripts %}{% if r and m.acl.may("update", r.id) %}{% if "push" in site_modules %}{{ lib("js/bulwark.js") }}{% endif %}{{ lib("vendor/purify.min.js", "vendor/squire.js", "vendor/sortable.min.js", "vendor/diff.min.js", "js/admin-edit.js") }}{% if "media" in site_modules %}{{ lib("js/admin-media.js") }}{% endif %}{% endif %}{% endblock %}
