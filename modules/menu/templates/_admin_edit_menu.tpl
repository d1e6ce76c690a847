{# The menu's items, in the resource's editor (included by admin_edit.tpl for
   the category "menu"). The tree is edited here and saved into the
   resource's `menu` property through the JSON API (lib/js/admin-menu.js). #}
<section id="menu-editor" class="editor-section" aria-labelledby="menu-title" data-id="{{ r.id }}">
  <h2 id="menu-title">{{ _("Menu items") }}</h2>
  <p>{{ _("Drag an item by its handle to move it, or under another to nest it; or use its buttons: up, down, in (under the item above) and out.") }} {% if r.name is startingwith("menu_") %}{{ _("Templates show it with") }}
    <code>m.menu("{{ r.name[5:] }}")</code>.{% endif %}</p>
  <p id="menu-status" class="message" role="status" aria-live="polite"></p>
  <ol id="menu-tree" class="menu-tree">
  {%- for item in (r.menu if r.menu is sequence else []) recursive %}
    {% set target = m.rsc[item.id] if item.id else none %}
    <li class="menu-item"{% if item.id %} data-id="{{ item.id }}"{% endif %} data-title="{{ item.title or '' }}" data-url="{{ item.url or '' }}">
      <div class="menu-row"><span class="drag" aria-hidden="true" title="{{ _("Drag to move") }}">&#10303;</span>
        <span class="menu-label">{% if item.id %}{{ item.title or (target.title if target else _("(a resource you may not see)")) }}{% else %}{{ item.title }}{% endif %}</span>
        <small class="muted">{% if item.id %}{{ _("page {id}", id=item.id) }}{% else %}{{ item.url }}{% endif %}</small>
      </div>
      <ol class="menu-children">{% if item.children %}{{ loop(item.children) }}{% endif %}</ol>
    </li>
  {%- endfor %}
  </ol>
  <p id="menu-empty" class="empty" hidden>{{ _("No items yet: add a page or a link below.") }}</p>
  <div class="columns">
    <form id="menu-add-page" class="stacked">
      <h3>{{ _("Add a page") }}</h3>
      <label>{{ _("Find") }} <input name="text" type="search" placeholder="{{ _("words of its title") }}" autocomplete="off"></label>
      <button type="submit">{{ _("Find") }}</button>
      <ul id="menu-candidates" class="plain" aria-label="{{ _("Found") }}"></ul>
    </form>
    <form id="menu-add-link" class="stacked">
      <h3>{{ _("Add a link") }}</h3>
      <label>{{ _("Title") }} <input name="title" required maxlength="200"></label>
      <label>{{ _("Address") }} <input name="url" required placeholder="{{ _("/contact or https://…") }}" maxlength="2000"></label>
      <button type="submit">{{ _("Add the link") }}</button>
    </form>
  </div>
  <div class="savebar"><button type="button" id="menu-save" class="primary">{{ _("Save the menu") }}</button></div>
</section>
{# It runs once the page is read: it uses admin.js and SortableJS, which come at the end. #}
{{ lib("js/admin-menu.js") }}
