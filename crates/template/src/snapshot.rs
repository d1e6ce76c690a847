//! What a site's templates were when it loaded, so that a reload knows which
//! cached pages to drop.
//!
//! A render records the dependency key of the template it rendered
//! ([`template_key`]), next to the keys of the data it read; a cached fragment
//! records the key of the template it sits in. When the site loads again, the
//! new snapshot is compared with the old one: a template whose source changed,
//! or that pulls in (`extends`, `include`, `import`, `from`) one that did, has
//! its key flushed, and the pages rendered from it go, while pages of other
//! templates stay cached.
//!
//! The references are read from the source with a small scanner of the four
//! tags rather than from minijinja's syntax tree (which it does not offer as a
//! stable interface). A tag that names its template with anything but string
//! literals (`{% include rsc.category ~ ".tpl" %}`) may pull in any template,
//! so its template counts as changed whenever any template did.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use bulwark_depcache::DependencyKey;

/// The dependency key of a template: everything rendered from it depends on it.
pub fn template_key(name: &str) -> DependencyKey {
    DependencyKey::from(format!("template:{name}"))
}

/// The templates a site could see when it loaded: each one's source
/// fingerprint and the templates it names.
#[derive(Debug, Default)]
pub struct TemplateSnapshot {
    templates: HashMap<String, Facts>,
}

#[derive(Debug)]
struct Facts {
    fingerprint: u64,
    key: DependencyKey,
    pulls_in: PullsIn,
}

#[derive(Debug, PartialEq)]
enum PullsIn {
    Named(Vec<String>),
    /// A template named at render time: it may be any.
    Any,
}

impl TemplateSnapshot {
    /// A snapshot of `sources` (template name and source text).
    pub(crate) fn of<'a>(sources: impl IntoIterator<Item = (String, &'a str)>) -> Self {
        let templates = sources
            .into_iter()
            .map(|(name, source)| {
                let mut hasher = DefaultHasher::new();
                source.hash(&mut hasher);
                let facts = Facts {
                    fingerprint: hasher.finish(),
                    key: template_key(&name),
                    pulls_in: pulled_in(source),
                };
                (name, facts)
            })
            .collect();
        TemplateSnapshot { templates }
    }

    /// The dependency key of a template (made once per load for the templates
    /// the snapshot holds).
    pub fn key(&self, name: &str) -> DependencyKey {
        match self.templates.get(name) {
            Some(facts) => facts.key.clone(),
            None => template_key(name),
        }
    }

    /// The keys of the templates whose output may differ from what they
    /// rendered under `before`: their own source changed, one they pull in
    /// did (in either version), or they are new or gone.
    pub fn changed_since(&self, before: &TemplateSnapshot) -> Vec<DependencyKey> {
        let names: HashSet<&str> = self
            .templates
            .keys()
            .chain(before.templates.keys())
            .map(String::as_str)
            .collect();
        let edited: HashSet<&str> = names
            .iter()
            .copied()
            .filter(|name| {
                let now = self.templates.get(*name).map(|f| f.fingerprint);
                now != before.templates.get(*name).map(|f| f.fingerprint)
            })
            .collect();
        if edited.is_empty() {
            return Vec::new();
        }
        // From the edited templates to those that pull them in, and on.
        let mut pulled_by: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut changed: HashSet<&str> = edited.clone();
        for snapshot in [self, before] {
            for (name, facts) in &snapshot.templates {
                match &facts.pulls_in {
                    PullsIn::Any => {
                        changed.insert(name);
                    }
                    PullsIn::Named(pulled) => {
                        for p in pulled {
                            pulled_by.entry(p).or_default().push(name);
                        }
                    }
                }
            }
        }
        let mut next: Vec<&str> = changed.iter().copied().collect();
        while let Some(name) = next.pop() {
            for by in pulled_by.get(name).into_iter().flatten() {
                if changed.insert(by) {
                    next.push(by);
                }
            }
        }
        let mut changed: Vec<&str> = changed.into_iter().collect();
        changed.sort_unstable();
        changed.into_iter().map(template_key).collect()
    }
}

/// The templates a source names in `extends`, `include`, `import` and `from`
/// tags.
fn pulled_in(source: &str) -> PullsIn {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(open) = rest.find("{%") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("%}") else { break };
        let tag = after[..close].trim_start_matches(['-', '+']).trim_start();
        rest = &after[close + 2..];
        let (word, argument) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
        if !matches!(word, "extends" | "include" | "import" | "from") {
            continue;
        }
        match literal_names(argument.trim_start()) {
            Some(mut named) => names.append(&mut named),
            None => return PullsIn::Any,
        }
    }
    PullsIn::Named(names)
}

/// The template names of a tag's argument when it is a string literal or a
/// list of them (what `include` tries in order); `None` for an expression.
fn literal_names(argument: &str) -> Option<Vec<String>> {
    let (mut rest, list) = match argument.strip_prefix('[') {
        Some(inside) => (inside, true),
        None => (argument, false),
    };
    let mut names = Vec::new();
    loop {
        rest = rest.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let end = rest[1..].find(quote)? + 1;
        names.push(rest[1..end].to_owned());
        rest = rest[end + 1..].trim_start();
        if !list {
            // What follows a single name must be the tag's own words
            // (`as`, `import`, `ignore missing`, `with context`), not `~`.
            return (rest.is_empty() || rest.starts_with(char::is_alphabetic)).then_some(names);
        }
        match rest.chars().next() {
            Some(',') => rest = &rest[1..],
            Some(']') => return Some(names),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(templates: &[(&str, &str)]) -> TemplateSnapshot {
        TemplateSnapshot::of(templates.iter().map(|(n, s)| (n.to_string(), *s)))
    }

    fn names(keys: Vec<DependencyKey>) -> Vec<String> {
        keys.iter().map(|k| k.as_str().to_owned()).collect()
    }

    #[test]
    fn the_four_tags_name_what_they_pull_in() {
        let source = r#"{% extends "base.tpl" %}{%- include ['a.tpl', "b.tpl"] ignore missing -%}
            {% import "macros.tpl" as m %}{% from 'forms.tpl' import field %}{% if x %}{% endif %}"#;
        assert_eq!(
            pulled_in(source),
            PullsIn::Named(vec![
                "base.tpl".into(),
                "a.tpl".into(),
                "b.tpl".into(),
                "macros.tpl".into(),
                "forms.tpl".into()
            ])
        );
    }

    #[test]
    fn a_name_made_at_render_time_may_be_any_template() {
        assert_eq!(
            pulled_in(r#"{% include "page." ~ kind ~ ".tpl" %}"#),
            PullsIn::Any
        );
        assert_eq!(pulled_in("{% include name %}"), PullsIn::Any);
    }

    #[test]
    fn an_edited_include_changes_the_pages_that_pull_it_in_and_no_others() {
        let before = snapshot(&[
            ("base.tpl", "<html>{% block body %}{% endblock %}</html>"),
            ("teaser.tpl", "<p>old</p>"),
            (
                "home.tpl",
                r#"{% extends "base.tpl" %}{% include "teaser.tpl" %}"#,
            ),
            ("about.tpl", r#"{% extends "base.tpl" %}about"#),
        ]);
        let after = snapshot(&[
            ("base.tpl", "<html>{% block body %}{% endblock %}</html>"),
            ("teaser.tpl", "<p>new</p>"),
            (
                "home.tpl",
                r#"{% extends "base.tpl" %}{% include "teaser.tpl" %}"#,
            ),
            ("about.tpl", r#"{% extends "base.tpl" %}about"#),
        ]);
        assert_eq!(
            names(after.changed_since(&before)),
            ["template:home.tpl", "template:teaser.tpl"]
        );
    }

    #[test]
    fn an_edited_base_changes_everything_that_extends_it() {
        let before = snapshot(&[("base.tpl", "a"), ("p.tpl", r#"{% extends "base.tpl" %}"#)]);
        let after = snapshot(&[("base.tpl", "b"), ("p.tpl", r#"{% extends "base.tpl" %}"#)]);
        assert_eq!(
            names(after.changed_since(&before)),
            ["template:base.tpl", "template:p.tpl"]
        );
    }

    #[test]
    fn a_dynamic_include_changes_with_any_template_and_nothing_changes_with_no_edit() {
        let before = snapshot(&[("x.tpl", "{% include name %}"), ("y.tpl", "1")]);
        let after = snapshot(&[("x.tpl", "{% include name %}"), ("y.tpl", "2")]);
        assert_eq!(
            names(after.changed_since(&before)),
            ["template:x.tpl", "template:y.tpl"]
        );
        assert!(after.changed_since(&after).is_empty());
    }

    #[test]
    fn a_cycle_of_includes_ends() {
        let before = snapshot(&[
            ("a.tpl", r#"{% include "b.tpl" %}"#),
            ("b.tpl", r#"{% include "a.tpl" %}"#),
            ("c.tpl", "1"),
        ]);
        let after = snapshot(&[
            ("a.tpl", r#"{% include "b.tpl" %}"#),
            ("b.tpl", r#"{% include "a.tpl" %}"#),
            ("c.tpl", "2"),
        ]);
        assert_eq!(names(after.changed_since(&before)), ["template:c.tpl"]);
        let edited_a = snapshot(&[
            ("a.tpl", r#"{% include "b.tpl" %}!"#),
            ("b.tpl", r#"{% include "a.tpl" %}"#),
            ("c.tpl", "2"),
        ]);
        assert_eq!(
            names(edited_a.changed_since(&after)),
            ["template:a.tpl", "template:b.tpl"]
        );
    }
}
