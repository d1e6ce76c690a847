{% include "_header.tpl" %}
<section class="hero">
  <h1>{{ _("Vote for a better Netherlands") }}</h1>
  <p class="lead">{{ _("Choose the three projects that matter most to you. The project with the most votes gets the money.") }}</p>
  <p><a class="button" href="{{ url('projects') }}">{{ _("See the projects and vote") }}</a></p>
</section>
<section>
  <h2>{{ _("How it works") }}</h2>
  <ol class="steps"><li>{{ _("Choose three projects.") }}</li><li>{{ _("Fill in your name, e-mail address and postcode.") }}</li><li>{{ _("You get a confirmation. One vote per e-mail address.") }}</li></ol>
</section>
{% include "_footer.tpl" %}
