{# Inserting a picture into the text (admin-media.js): one from the library
   or a new upload, with what a reader who cannot see it is told, a caption,
   and where and how large it stands. The list is made here (previews through
   image(), so only what the editor may see); a search fetches this page
   again with ?picture_text= and takes the list from it. #}
<dialog id="picture-dialog" class="dialog roomy" aria-labelledby="picture-title">
  <form method="dialog" id="picture-form">
    <h2 id="picture-title">{{ _("Insert a picture") }}</h2>
    <div class="picture-source">
      <p><label for="picture-find">{{ _("Find in the library") }}</label><br>
        <input id="picture-find" type="search" value="{{ q.picture_text or '' }}" autocomplete="off" aria-controls="picture-choices"></p>
      <p><label for="picture-file">{{ _("Or upload one") }}</label><br>
        <input id="picture-file" type="file" accept="image/*">
        <progress id="picture-progress" max="1" value="0" hidden aria-label="{{ _("Uploading") }}"></progress></p>
    </div>
    <ul id="picture-choices" class="media-grid plain" aria-label="{{ _("Pictures in the library") }}">
    {% for img in m.search(cat="image", text=q.picture_text, sort="-created", pagelen=24) %}
      <li><button type="button" aria-pressed="false" data-picture="{{ img.id }}" data-src="{{ image_url(img.id, "medium") }}" data-width="{{ img.width or '' }}" data-height="{{ img.height or '' }}" data-alt="{{ img.alt or '' }}" aria-label="{{ img.title or img.id }}">{{ image(img.id, "thumbnail", alt="") }}</button></li>
    {% else %}
      <li class="empty">{{ _("No picture found: upload one above.") if q.picture_text else _("The library has no pictures yet: upload one above.") }}</li>
    {% endfor %}
    </ul>
    <p id="picture-chosen" class="message" role="status" aria-live="polite"></p>
    <p><label for="picture-alt">{{ _("Text for those who cannot see it") }}</label><br>
      <input id="picture-alt" size="50" maxlength="300" aria-describedby="picture-alt-help">
      <br><small id="picture-alt-help">{{ _("What the picture shows that the text needs, in a sentence (not “picture of”).") }}</small></p>
    <p><label><input id="picture-decorative" type="checkbox"> {{ _("Decorative: it adds nothing the text does not say") }}</label></p>
    <p><label for="picture-caption">{{ _("Caption (optional, shown below it)") }}</label><br>
      <input id="picture-caption" size="50" maxlength="300"></p>
    <div class="picture-place">
      <fieldset>
        <legend>{{ _("Where") }}</legend>
        <label><input type="radio" name="align" value="center" checked> {{ _("On its own line") }}</label>
        <label><input type="radio" name="align" value="left"> {{ _("Left, text beside it") }}</label>
        <label><input type="radio" name="align" value="right"> {{ _("Right, text beside it") }}</label>
        <label><input type="radio" name="align" value="wide"> {{ _("The text's whole width") }}</label>
      </fieldset>
      <fieldset>
        <legend>{{ _("Size") }}</legend>
        <label><input type="radio" name="size" value="small"> {{ _("Small") }}</label>
        <label><input type="radio" name="size" value="medium" checked> {{ _("Medium") }}</label>
        <label><input type="radio" name="size" value="large"> {{ _("Large") }}</label>
      </fieldset>
    </div>
    <p id="picture-status" class="message" role="status" aria-live="polite"></p>
    <p class="actions"><button type="submit" value="insert" id="picture-insert" class="primary">{{ _("Insert the picture") }}</button>
      <button type="submit" value="cancel" formnovalidate>{{ _("Cancel") }}</button></p>
  </form>
</dialog>
