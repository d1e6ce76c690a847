//! Dispatch rules: from a request path to a controller, and back (`url(...)`).
//!
//! A site's rules and the rules of its enabled modules are compiled into one
//! `matchit` radix tree per site. Site rules come first: a module rule whose path or
//! name is already taken is left out, which is how a site overrides a module's page.
//! The compiled router is immutable; a config change builds a new one and swaps it in.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// What handles a matched request, with its options from `site.toml`.
#[derive(Debug, Clone, PartialEq)]
pub enum Controller {
    /// Render a named template; path arguments become template variables.
    /// `cache`: anonymous visitors get the page from the page cache (default).
    /// `vars`: more variables, the same for every request (`{ format =
    /// "rss" }`: one template for two rules).
    Template {
        template: String,
        content_type: Option<String>,
        cache: bool,
        vars: BTreeMap<String, String>,
    },
    /// Combined static files from the `lib/` folders (`path` argument).
    Lib,
    /// Files under a folder of the site (`path` argument), with range requests.
    File { root: String },
    /// Redirect to a path, a URL, or another rule by name.
    Redirect { to: String, permanent: bool },
    /// A resource's page (`id` argument: a number or a unique name), rendered with
    /// `page.<category>.tpl`, falling back up the category tree to `page.tpl`.
    Page { cache: bool },
    /// An endpoint a module declared in code (method, rights, handler and
    /// OpenAPI description together), known here only by its name: the rule's
    /// `endpoint` option, or the rule's own name. A module's endpoint comes with
    /// a rule of its name; a site rule of that name moves or replaces it.
    Endpoint { name: String },
    /// A controller kind that a module brings (`controller = "push"`), with the
    /// rule's other keys as its options, checked by the module when the site loads.
    Module { kind: String, options: toml::Table },
}

#[derive(Debug, Clone, PartialEq)]
pub struct DispatchRule {
    pub name: String,
    pub pattern: RulePattern,
    pub controller: Controller,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Literal(String),
    Param(String),
    CatchAll(String),
}

/// A path pattern such as `/page/{id}/{slug}` or `/lib/{*path}`.
#[derive(Debug, Clone, PartialEq)]
pub struct RulePattern {
    source: String,
    segments: Vec<Segment>,
}

/// Why a rule's `path` is not a pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    #[error("{path:?} must start with '/'")]
    NotAbsolute { path: String },
    #[error("{path:?}: a catch-all {{*{name}}} must be last")]
    CatchAllNotLast { path: String, name: String },
    #[error("{path:?}: a parameter must fill a whole segment")]
    PartialSegment { path: String },
    #[error("{path:?}: {name:?} is not a parameter name")]
    BadParameterName { path: String, name: String },
    #[error("{path:?}: more than {MAX_PARAMETERS} parameters")]
    TooManyParameters { path: String },
}

/// The most `{name}` parameters one pattern may have. The router (matchit)
/// panics past 26; no real path needs half as many.
const MAX_PARAMETERS: usize = 16;

/// Why reverse routing (`url(...)`) made no path: the rule and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlError {
    pub rule: String,
    pub kind: UrlErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlErrorKind {
    /// No dispatch rule has this name.
    UnknownRule,
    /// The pattern has a parameter that no argument fills.
    MissingArgument { name: String },
    /// More positional arguments than the pattern has parameters.
    TooManyArguments,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = &self.rule;
        match &self.kind {
            UrlErrorKind::UnknownRule => write!(f, "no dispatch rule named {rule:?}"),
            UrlErrorKind::MissingArgument { name } => {
                write!(f, "url({rule:?}): missing argument {name:?}")
            }
            UrlErrorKind::TooManyArguments => write!(f, "url({rule:?}): too many arguments"),
        }
    }
}

impl std::error::Error for UrlError {}

/// Two of a site's own rules claim the same path (or overlapping ones).
#[derive(Debug, thiserror::Error)]
#[error("rule {rule:?} ({path}): {source}")]
pub struct RuleConflict {
    pub rule: String,
    pub path: String,
    #[source]
    pub source: matchit::InsertError,
}

impl RulePattern {
    pub fn parse(path: &str) -> Result<RulePattern, PatternError> {
        if !path.starts_with('/') {
            return Err(PatternError::NotAbsolute { path: path.into() });
        }
        let mut segments = Vec::new();
        let parts: Vec<&str> = path[1..].split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let segment =
                if let Some(inner) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                    if let Some(name) = inner.strip_prefix('*') {
                        if i + 1 != parts.len() {
                            return Err(PatternError::CatchAllNotLast {
                                path: path.into(),
                                name: name.into(),
                            });
                        }
                        Segment::CatchAll(check_param_name(path, name)?)
                    } else {
                        Segment::Param(check_param_name(path, inner)?)
                    }
                } else if part.contains(['{', '}']) {
                    return Err(PatternError::PartialSegment { path: path.into() });
                } else {
                    Segment::Literal(part.to_string())
                };
            segments.push(segment);
        }
        let parameters = segments
            .iter()
            .filter(|s| matches!(s, Segment::Param(_)))
            .count();
        if parameters > MAX_PARAMETERS {
            return Err(PatternError::TooManyParameters { path: path.into() });
        }
        Ok(RulePattern {
            source: path.to_string(),
            segments,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Builds a path from arguments: positional ones fill the parameters in order,
    /// named ones by name; named arguments that are not parameters become the query.
    fn build(
        &self,
        positional: &[String],
        named: &[(String, String)],
    ) -> Result<String, UrlErrorKind> {
        // Sized once: a page builds a URL for every link it shows.
        let given: usize = positional.iter().map(String::len).sum::<usize>()
            + named
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let mut out = String::with_capacity(self.as_str().len() + given);
        let mut next_positional = positional.iter();
        let mut used = Vec::new();
        for segment in &self.segments {
            out.push('/');
            match segment {
                Segment::Literal(l) => out.push_str(l),
                Segment::Param(name) | Segment::CatchAll(name) => {
                    let value = named
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v)
                        .or_else(|| next_positional.next())
                        .ok_or_else(|| UrlErrorKind::MissingArgument { name: name.clone() })?;
                    used.push(name.as_str());
                    let set = if matches!(segment, Segment::CatchAll(_)) {
                        PATH_ENCODE
                    } else {
                        SEGMENT_ENCODE
                    };
                    out.extend(utf8_percent_encode(value, set));
                }
            }
        }
        if next_positional.next().is_some() {
            return Err(UrlErrorKind::TooManyArguments);
        }
        let mut sep = '?';
        for (k, v) in named.iter().filter(|(k, _)| !used.contains(&k.as_str())) {
            out.push(sep);
            sep = '&';
            out.extend(utf8_percent_encode(k, QUERY_ENCODE));
            out.push('=');
            out.extend(utf8_percent_encode(v, QUERY_ENCODE));
        }
        Ok(out)
    }
}

fn check_param_name(path: &str, name: &str) -> Result<String, PatternError> {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(name.to_string())
    } else {
        Err(PatternError::BadParameterName {
            path: path.into(),
            name: name.into(),
        })
    }
}

const PATH_ENCODE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'\'')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');
const SEGMENT_ENCODE: &AsciiSet = &PATH_ENCODE.add(b'/');
const QUERY_ENCODE: &AsciiSet = &SEGMENT_ENCODE.add(b'&').add(b'=').add(b'+');

/// A matched request: the rule and its path arguments (percent-decoded).
#[derive(Debug)]
pub struct RouteMatch<'r> {
    /// Position of the rule in [`SiteRouter::rules`].
    pub index: usize,
    pub rule: &'r DispatchRule,
    pub args: Vec<(String, String)>,
}

/// The compiled dispatch table of one site.
#[derive(Debug)]
pub struct SiteRouter {
    tree: matchit::Router<usize>,
    rules: Vec<DispatchRule>,
    /// Rule names, from the site's configuration: foldhash, not SipHash
    /// (`url(name)` looks one up for every link a page shows).
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl SiteRouter {
    /// Compiles site rules (which must not conflict among themselves) and then module
    /// rules (left out where a site rule already has the path or the name).
    pub fn build(
        site_rules: &[DispatchRule],
        module_rules: &[DispatchRule],
    ) -> Result<SiteRouter, RuleConflict> {
        let mut router = SiteRouter {
            tree: matchit::Router::new(),
            rules: Vec::new(),
            by_name: HashMap::default(),
        };
        for rule in site_rules {
            router.insert(rule.clone()).map_err(|source| RuleConflict {
                rule: rule.name.clone(),
                path: rule.pattern.as_str().to_string(),
                source,
            })?;
        }
        for rule in module_rules {
            if !router.by_name.contains_key(&rule.name) {
                // A conflict means the site already serves this path: keep the site's.
                let _ = router.insert(rule.clone());
            }
        }
        Ok(router)
    }

    fn insert(&mut self, rule: DispatchRule) -> Result<(), matchit::InsertError> {
        let index = self.rules.len();
        self.tree.insert(rule.pattern.as_str(), index)?;
        self.by_name.insert(rule.name.clone(), index);
        self.rules.push(rule);
        Ok(())
    }

    /// Finds the rule for a raw (still percent-encoded) request path.
    pub fn route(&self, raw_path: &str) -> Option<RouteMatch<'_>> {
        let matched = self.tree.at(raw_path).ok()?;
        let args = matched
            .params
            .iter()
            .map(|(k, v)| {
                let decoded = percent_encoding::percent_decode_str(v).decode_utf8_lossy();
                (k.to_string(), decoded.into_owned())
            })
            .collect();
        Some(RouteMatch {
            index: *matched.value,
            rule: &self.rules[*matched.value],
            args,
        })
    }

    /// Reverse routing: the path of the rule `name` with these arguments.
    pub fn url_for(
        &self,
        name: &str,
        positional: &[String],
        named: &[(String, String)],
    ) -> Result<String, UrlError> {
        let error = |kind| UrlError {
            rule: name.to_string(),
            kind,
        };
        let rule = self
            .by_name
            .get(name)
            .map(|i| &self.rules[*i])
            .ok_or_else(|| error(UrlErrorKind::UnknownRule))?;
        rule.pattern.build(positional, named).map_err(error)
    }

    pub fn rules(&self) -> &[DispatchRule] {
        &self.rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &str, path: &str, template: &str) -> DispatchRule {
        DispatchRule {
            name: name.into(),
            pattern: RulePattern::parse(path).unwrap(),
            controller: Controller::Template {
                template: template.into(),
                content_type: None,
                cache: true,
                vars: BTreeMap::new(),
            },
        }
    }

    #[test]
    fn routes_with_named_segments_and_decodes_them() {
        let r = SiteRouter::build(&[rule("page", "/page/{id}/{slug}", "page.tpl")], &[]).unwrap();
        let m = r.route("/page/42/hello%20world").unwrap();
        assert_eq!(m.rule.name, "page");
        assert_eq!(
            m.args,
            vec![
                ("id".into(), "42".into()),
                ("slug".into(), "hello world".into())
            ]
        );
        assert!(r.route("/page/42").is_none());
    }

    #[test]
    fn site_rules_override_module_rules_by_path_and_name() {
        let site = [rule("robots", "/robots.txt", "site-robots.tpl")];
        let module = [
            rule("robots", "/robots.txt", "module-robots.tpl"),
            rule("other", "/robots.txt", "x.tpl"),
            rule("sitemap", "/sitemap.xml", "sitemap.tpl"),
        ];
        let r = SiteRouter::build(&site, &module).unwrap();
        let m = r.route("/robots.txt").unwrap();
        assert_eq!(m.rule.controller, site[0].controller);
        assert!(r.route("/sitemap.xml").is_some());
    }

    #[test]
    fn conflicting_site_rules_are_an_error() {
        let e = SiteRouter::build(&[rule("a", "/x", "a"), rule("b", "/x", "b")], &[]).unwrap_err();
        assert!(e.to_string().contains("\"b\""), "{e}");
    }

    #[test]
    fn reverse_routing_fills_positional_named_and_query() {
        let r = SiteRouter::build(
            &[
                rule("page", "/page/{id}/{slug}", "p"),
                rule("file", "/f/{*path}", "f"),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(
            r.url_for("page", &["42".into()], &[("slug".into(), "a b/c".into())])
                .unwrap(),
            "/page/42/a%20b%2Fc"
        );
        assert_eq!(
            r.url_for(
                "file",
                &["img/x y.png".into()],
                &[("w".into(), "1&2".into())]
            )
            .unwrap(),
            "/f/img/x%20y.png?w=1%262"
        );
        let missing = r.url_for("page", &[], &[]).unwrap_err();
        assert_eq!(
            missing.kind,
            UrlErrorKind::MissingArgument { name: "id".into() }
        );
        assert_eq!(missing.to_string(), r#"url("page"): missing argument "id""#);
        let too_many = r.url_for("file", &["a".into(), "b".into()], &[]);
        assert_eq!(
            too_many.unwrap_err().to_string(),
            r#"url("file"): too many arguments"#
        );
        let unknown = r.url_for("nope", &[], &[]).unwrap_err();
        assert_eq!(unknown.kind, UrlErrorKind::UnknownRule);
        assert_eq!(unknown.to_string(), r#"no dispatch rule named "nope""#);
    }

    #[test]
    fn patterns_are_validated() {
        let error = |path| RulePattern::parse(path).unwrap_err().to_string();
        assert_eq!(error("page"), r#""page" must start with '/'"#);
        assert_eq!(
            error("/a/{*rest}/b"),
            r#""/a/{*rest}/b": a catch-all {*rest} must be last"#
        );
        assert_eq!(
            error("/a/x{id}"),
            r#""/a/x{id}": a parameter must fill a whole segment"#
        );
        assert_eq!(
            error("/a/{i-d}"),
            r#""/a/{i-d}": "i-d" is not a parameter name"#
        );
    }

    /// Found by the `dispatch_path` fuzz target: the router panicked on the
    /// 27th parameter of a pattern, so a site.toml with such a rule took the
    /// site loader down instead of naming the rule.
    #[test]
    fn a_pattern_with_more_parameters_than_the_router_takes_is_refused() {
        let path = |n: usize| {
            (0..n).fold(String::new(), |mut p, i| {
                p.push_str(&format!("/{{p{i}}}"));
                p
            })
        };
        let most = RulePattern::parse(&path(MAX_PARAMETERS)).unwrap();
        SiteRouter::build(&[rule_with(&most)], &[]).unwrap();
        for n in [MAX_PARAMETERS + 1, 27] {
            assert!(matches!(
                RulePattern::parse(&path(n)),
                Err(PatternError::TooManyParameters { .. })
            ));
        }
    }

    fn rule_with(pattern: &RulePattern) -> DispatchRule {
        DispatchRule {
            name: "many".into(),
            pattern: pattern.clone(),
            controller: Controller::Lib,
        }
    }
}
