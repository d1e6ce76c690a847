{#- The voting site's error messages by field and problem, in English (the
    source language): vote.tpl shows them through _(), translated from
    translations/nl.po like every other text of the site. -#}
{% set error_texts = {
  "form.expired": N_("This form expired or did not come from this site. Please try again."),
  "picks.too_few": N_("Choose exactly three projects."),
  "picks.too_many": N_("Choose exactly three projects."),
  "picks.twice": N_("Choose three different projects."),
  "picks.invalid": N_("We do not know that choice."),
  "picks.unknown": N_("We do not know that choice."),
  "name.missing": N_("Please fill in your name."),
  "name.invalid": N_("A name has 2 to 100 characters."),
  "email.missing": N_("Please fill in your e-mail address."),
  "email.invalid": N_("This is not a valid e-mail address."),
  "email.taken": N_("This e-mail address has already voted. Everyone votes once."),
  "postcode.missing": N_("Please fill in your postcode."),
  "postcode.invalid": N_("A postcode is four digits and two letters, like 1234 AB.")
} %}
