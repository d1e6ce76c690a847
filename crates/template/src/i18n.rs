//! Template texts in every language: `_("Read more")`, `_("Hello {name}",
//! name=user)` and `_n("{n} comment", "{n} comments", count)`, translated
//! from gettext catalogs. (minijinja has no custom tags, so there is no
//! `{% trans %}` block: `_()` is the one form.)
//!
//! A site's catalogs are `translations/<language>.po` in the site folder and
//! in each enabled module (embedded, like its templates); the site's come
//! first, then the modules' in their lookup order, so a site may translate a
//! module's text its own way. Catalogs are read once, when the site loads
//! (polib parses them); a broken one is reported with the others' errors and
//! left out, its texts shown untranslated.
//!
//! A text is looked up in the page's language; missing there, it is the text
//! as written in the template (the source language), never a third
//! language's. The result is plain text: the page's autoescape
//! escapes it with the values put in it, so a translation cannot inject
//! markup.
//!
//! Scripts translate with the same catalogs: `{{ script_texts("js/a.js") }}`
//! puts the page language's translations of the texts that script uses (a
//! message whose `#:` place is that `.js` file; with no file, every script's)
//! in a JSON element (once a page, however many templates ask), and core's
//! `js/texts.js` gives scripts `_("text", {name})` over them.

use std::collections::HashMap;
use std::sync::Arc;

use bulwark_site::Site;
use minijinja::value::{Kwargs, Rest};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use crate::models::RenderScope;

/// The catalogs' maps: looked up for every text a page shows, keyed by the
/// site's own msgids (not by what visitors send), so foldhash rather than SipHash.
type TextMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// One language's translations.
#[derive(Default)]
struct Catalog {
    /// msgid (with its context, `ctx\u{4}msgid`) -> text.
    /// (Kept as template values: a page shows one without a copy.)
    singular: TextMap<String, Value>,
    /// msgid -> the plural forms.
    plural: TextMap<String, Vec<String>>,
    /// Which form a count takes (the catalog's `Plural-Forms`).
    rule: Option<PluralRule>,
    /// The msgids scripts use (a `#:` place that is a `.js` file), with
    /// those files: a page hands their translations to its scripts
    /// (`script_texts()`).
    for_scripts: Vec<(String, Vec<String>)>,
}

/// A site's catalogs by language.
#[derive(Default)]
pub struct Catalogs {
    by_language: TextMap<String, Catalog>,
    /// What could not be read, for the site's load report.
    errors: Vec<String>,
}

impl Catalogs {
    /// The site's catalogs and its modules', for the site's languages.
    pub fn load(site: &Site) -> Catalogs {
        let mut catalogs = Catalogs::default();
        for language in &site.config.languages {
            let name = format!("{language}.po");
            let own = site.dir.join("translations").join(&name);
            if let Ok(text) = std::fs::read_to_string(&own) {
                catalogs.add(language, &own.display().to_string(), &text);
            }
            for module in &site.modules {
                let Some(dir) = module.translations else {
                    continue;
                };
                if let Some(text) = dir.get_file(&name).and_then(|f| f.contents_utf8()) {
                    let source = format!("module {}: translations/{name}", module.name);
                    catalogs.add(language, &source, text);
                }
            }
        }
        catalogs
    }

    /// Adds `text` (a `.po` file) to `language`'s catalog; what it has that
    /// the catalog has already (from a file read before) stays as it was.
    fn add(&mut self, language: &str, source: &str, text: &str) {
        let parsed = match parse_po(text) {
            Ok(parsed) => parsed,
            Err(e) => {
                self.errors.push(format!("{source}: {e}"));
                return;
            }
        };
        let catalog = self.by_language.entry(language.to_owned()).or_default();
        if catalog.rule.is_none() {
            let rules = &parsed.metadata.plural_rules;
            match PluralRule::parse(&rules.expr, rules.nplurals) {
                Ok(rule) => catalog.rule = Some(rule),
                Err(e) => self.errors.push(format!("{source}: Plural-Forms: {e}")),
            }
        }
        for message in parsed.messages() {
            if !message.is_translated() || message.is_fuzzy() {
                continue;
            }
            let scripts: Vec<String> = message
                .source()
                .split_whitespace()
                .filter_map(|place| place.split(':').next())
                .filter(|file| file.ends_with(".js"))
                .map(str::to_owned)
                .collect();
            if !scripts.is_empty() && !message.is_plural() {
                match catalog
                    .for_scripts
                    .iter_mut()
                    .find(|(id, _)| id == message.msgid())
                {
                    Some((_, files)) => files.extend(scripts),
                    None => catalog
                        .for_scripts
                        .push((message.msgid().to_owned(), scripts)),
                }
            }
            let key = match message.msgctxt() {
                Some(ctx) if !ctx.is_empty() => format!("{ctx}\u{4}{}", message.msgid()),
                _ => message.msgid().to_owned(),
            };
            if message.is_plural() {
                if let Ok(forms) = message.msgstr_plural() {
                    catalog.plural.entry(key).or_insert_with(|| forms.clone());
                }
            } else if let Ok(text) = message.msgstr() {
                catalog
                    .singular
                    .entry(key)
                    .or_insert_with(|| Value::from(text));
            }
        }
    }

    /// Problems met while reading the catalogs.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// `msgid` in the first of `languages` (the page's), else as it is: the
    /// text as written is the source language's, so a text the page's
    /// language lacks is never taken from a third language.
    pub fn text<'a>(&'a self, languages: &[String], msgid: &'a str) -> &'a str {
        self.translation(languages, msgid)
            .and_then(Value::as_str)
            .unwrap_or(msgid)
    }

    /// `msgid`'s translation into the first of `languages`, if it has one.
    fn translation(&self, languages: &[String], msgid: &str) -> Option<&Value> {
        languages
            .first()
            .and_then(|l| self.by_language.get(l))
            .and_then(|c| c.singular.get(msgid))
    }

    /// The form of `singular`/`plural` for `n` in the first of `languages`
    /// (the page's), else English's rule on the texts as written.
    pub fn plural_text<'a>(
        &'a self,
        languages: &[String],
        singular: &'a str,
        plural: &'a str,
        n: u64,
    ) -> &'a str {
        let catalog = languages.first().and_then(|l| self.by_language.get(l));
        if let Some(catalog) = catalog
            && let Some(forms) = catalog.plural.get(singular)
        {
            let index = catalog
                .rule
                .as_ref()
                .map_or(usize::from(n != 1), |r| r.form(n));
            if let Some(text) = forms.get(index).filter(|t| !t.is_empty()) {
                return text;
            }
        }
        if n == 1 { singular } else { plural }
    }

    /// The translations into `language` of the texts scripts use (those of
    /// `scripts`, paths under `lib/`, or with none every script's), as one
    /// JSON object (msgid -> text) for the page to hand them.
    pub fn script_texts(
        &self,
        language: &str,
        scripts: &[String],
    ) -> serde_json::Map<String, serde_json::Value> {
        let Some(catalog) = self.by_language.get(language) else {
            return serde_json::Map::new();
        };
        catalog
            .for_scripts
            .iter()
            .filter(|(_, files)| scripts.is_empty() || files.iter().any(|f| scripts.contains(f)))
            .filter_map(|(id, _)| {
                let text = catalog.singular.get(id)?.as_str()?;
                Some((id.clone(), text.into()))
            })
            .collect()
    }

    /// Whether a catalog for `language` was read.
    pub fn has(&self, language: &str) -> bool {
        self.by_language.contains_key(language)
    }
}

/// Why a `.po` file is not a catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{0}")]
    Parse(#[from] polib::po_file::POParseError),
    /// polib gave up with a panic instead of an error.
    #[error("not a catalog the parser can read")]
    Unreadable,
}

/// A `.po` file's catalog. polib 0.3 panics on some valid input (a comment
/// line that is a bare `#`, as other tools write them) instead of answering
/// an error: those lines are read as the empty comments they are, and a
/// panic left anyway is this file's error, never the server's end.
pub fn parse_po(text: &str) -> Result<polib::catalog::Catalog, CatalogError> {
    let normalised: String = text
        .lines()
        .map(|line| {
            if line.trim_end() == "#" {
                "# \n".to_owned()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let parsed =
        std::panic::catch_unwind(|| polib::po_file::parse_from_reader(normalised.as_bytes()));
    match parsed {
        Ok(catalog) => Ok(catalog?),
        Err(_) => Err(CatalogError::Unreadable),
    }
}

/// Adds `_()`, `_n()` and `N_()` to a site's templates. `N_("text")` is the
/// text as it is, marked for extraction: for texts defined in one place and
/// translated where they are shown (`_(feature.title)`).
pub(crate) fn register(env: &mut Environment<'static>, catalogs: Arc<Catalogs>) {
    env.add_function("N_", |text: String| text);
    let for_scripts = catalogs.clone();
    env.add_function(
        "script_texts",
        move |state: &mut State, scripts: Rest<String>| -> Value {
            // Once a page for the same scripts: templates that each need them
            // (a comment form, a form) may all ask.
            let asked = format!("script_texts:{}", scripts.join(" "));
            if state.get_temp(&asked).is_some() {
                return Value::from_safe_string(String::new());
            }
            state.set_temp(&asked, Value::from(true));
            let texts = with_languages(state, |languages| {
                let language = languages.first().map_or("", String::as_str);
                for_scripts.script_texts(language, &scripts)
            });
            // `<` escaped: the object cannot end its script element.
            let json = serde_json::Value::Object(texts)
                .to_string()
                .replace('<', "\\u003c");
            Value::from_safe_string(format!(
                r#"<script type="application/json" class="bulwark-texts">{json}</script>"#
            ))
        },
    );
    let for_plural = catalogs.clone();
    env.add_function(
        "_",
        move |state: &State, msgid: Value, kwargs: Kwargs| -> Result<Value, Error> {
            // A text that is not there (an unset setting) shows nothing.
            if msgid.is_undefined() || msgid.is_none() {
                return Ok(msgid);
            }
            let Some(id) = msgid.as_str() else {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "_(text): the text to translate is not a string",
                ));
            };
            with_languages(state, |languages| {
                let found = catalogs.translation(languages, id);
                let text = found.and_then(Value::as_str).unwrap_or(id);
                // Nothing to fill (most texts): the translation, or the text
                // as written, shown as it is, without a copy.
                if !text.contains(['{', '}']) && kwargs.args().next().is_none() {
                    return Ok(found.unwrap_or(&msgid).clone());
                }
                Ok(Value::from(fill(text, &kwargs, None)?))
            })
        },
    );
    env.add_function(
        "_n",
        move |state: &State, args: Rest<Value>, kwargs: Kwargs| -> Result<Value, Error> {
            let (Some(singular), Some(plural), Some(n)) = (
                args.first().and_then(Value::as_str),
                args.get(1).and_then(Value::as_str),
                args.get(2).and_then(|n| u64::try_from(n.clone()).ok()),
            ) else {
                return Err(Error::new(
                    ErrorKind::MissingArgument,
                    "_n(singular, plural, count): two texts and a count of 0 or more",
                ));
            };
            with_languages(state, |languages| {
                let text = for_plural.plural_text(languages, singular, plural, n);
                Ok(Value::from(fill(text, &kwargs, Some(n))?))
            })
        },
    );
}

/// `f` with the languages a render reads texts in: its models' order, or
/// for a page rendered without models (an error page) the `language` it was
/// given.
fn with_languages<T>(state: &State, f: impl FnOnce(&[String]) -> T) -> T {
    if let Some(scope) = RenderScope::of(state) {
        return f(scope.language_order());
    }
    let given: Vec<String> = state
        .lookup("language")
        .and_then(|v| v.as_str().map(str::to_owned))
        .into_iter()
        .collect();
    f(&given)
}

/// `{name}` in `text` replaced by the keyword argument `name`, `{n}` by the
/// count; `{{` and `}}` are braces.
fn fill(text: &str, kwargs: &Kwargs, n: Option<u64>) -> Result<String, Error> {
    if !text.contains(['{', '}']) {
        kwargs.assert_all_used()?;
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if rest[open..].starts_with("{{") || rest[open..].starts_with("}}") {
            out.push_str(&rest[open..open + 1]);
            rest = &after[1..];
            continue;
        }
        let close = match (rest.as_bytes()[open], after.find('}')) {
            (b'{', Some(close)) => close,
            _ => {
                out.push_str(&rest[open..open + 1]);
                rest = after;
                continue;
            }
        };
        let name = &after[..close];
        match (name, n) {
            ("n", Some(n)) => out.push_str(&n.to_string()),
            _ => {
                let value: Option<Value> = kwargs.get(name)?;
                match value {
                    Some(v) => out.push_str(&v.to_string()),
                    None => {
                        return Err(Error::new(
                            ErrorKind::MissingArgument,
                            format!("the text {text:?} needs {name}="),
                        ));
                    }
                }
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    kwargs.assert_all_used()?;
    Ok(out)
}

/// A catalog's `Plural-Forms` rule: which of `nplurals` forms a count takes.
///
/// Written here because no maintained crate evaluates the rule of a parsed
/// `.po` file (polib keeps it as text; the gettext crate reads only `.mo`
/// files). The rule is a C expression over `n`: numbers, `n`, `! % * / + -`,
/// comparisons, `&& ||`, `?:` and parentheses.
#[derive(Debug, Clone)]
struct PluralRule {
    expr: Expr,
    forms: usize,
}

#[derive(Debug, Clone)]
enum Expr {
    N,
    Number(u64),
    Not(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl PluralRule {
    fn parse(expr: &str, forms: usize) -> Result<PluralRule, String> {
        let tokens = tokenize(expr)?;
        let mut parser = Parser { tokens, at: 0 };
        let expr = parser.ternary()?;
        if parser.at != parser.tokens.len() {
            return Err(format!("unexpected {:?}", parser.tokens[parser.at]));
        }
        Ok(PluralRule {
            expr,
            forms: forms.max(1),
        })
    }

    /// The form `n` takes (a rule that answers past the last form: the last).
    fn form(&self, n: u64) -> usize {
        (eval(&self.expr, n) as usize).min(self.forms - 1)
    }
}

fn eval(e: &Expr, n: u64) -> u64 {
    match e {
        Expr::N => n,
        Expr::Number(v) => *v,
        Expr::Not(e) => u64::from(eval(e, n) == 0),
        Expr::If(c, a, b) => {
            if eval(c, n) != 0 {
                eval(a, n)
            } else {
                eval(b, n)
            }
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (eval(a, n), eval(b, n));
            match op {
                Op::Or => u64::from(a != 0 || b != 0),
                Op::And => u64::from(a != 0 && b != 0),
                Op::Eq => u64::from(a == b),
                Op::Ne => u64::from(a != b),
                Op::Lt => u64::from(a < b),
                Op::Le => u64::from(a <= b),
                Op::Gt => u64::from(a > b),
                Op::Ge => u64::from(a >= b),
                Op::Add => a.wrapping_add(b),
                Op::Sub => a.wrapping_sub(b),
                Op::Mul => a.wrapping_mul(b),
                Op::Div => a.checked_div(b).unwrap_or(0),
                Op::Rem => a.checked_rem(b).unwrap_or(0),
            }
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            tokens.push(text[start..i].to_owned());
        } else if c == b'n' {
            tokens.push("n".into());
            i += 1;
        } else {
            let two = text.get(i..i + 2).unwrap_or("");
            if ["||", "&&", "==", "!=", "<=", ">="].contains(&two) {
                tokens.push(two.to_owned());
                i += 2;
            } else if b"!%*/+-<>?:()".contains(&c) {
                tokens.push((c as char).to_string());
                i += 1;
            } else {
                return Err(format!("unexpected {:?}", c as char));
            }
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<String>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(String::as_str)
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.peek() == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn ternary(&mut self) -> Result<Expr, String> {
        let condition = self.binary(0)?;
        if !self.eat("?") {
            return Ok(condition);
        }
        let yes = self.ternary()?;
        if !self.eat(":") {
            return Err("a ? without its :".into());
        }
        let no = self.ternary()?;
        Ok(Expr::If(Box::new(condition), Box::new(yes), Box::new(no)))
    }

    /// Binary operators by C's precedence, loosest first.
    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: &[&[(&str, Op)]] = &[
            &[("||", Op::Or)],
            &[("&&", Op::And)],
            &[("==", Op::Eq), ("!=", Op::Ne)],
            &[("<", Op::Lt), ("<=", Op::Le), (">", Op::Gt), (">=", Op::Ge)],
            &[("+", Op::Add), ("-", Op::Sub)],
            &[("*", Op::Mul), ("/", Op::Div), ("%", Op::Rem)],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.binary(level + 1)?;
        while let Some(&(_, op)) = ops.iter().find(|(t, _)| self.peek() == Some(*t)) {
            self.at += 1;
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("(") {
            let inner = self.ternary()?;
            if !self.eat(")") {
                return Err("a ( without its )".into());
            }
            return Ok(inner);
        }
        match self.peek() {
            Some("n") => {
                self.at += 1;
                Ok(Expr::N)
            }
            Some(t) if t.bytes().all(|b| b.is_ascii_digit()) => {
                let v = t.parse().map_err(|_| format!("{t} is too large"))?;
                self.at += 1;
                Ok(Expr::Number(v))
            }
            other => Err(format!("expected a number or n, found {other:?}")),
        }
    }
}

/// The texts a template passes to `_()` and `_n()`, for the `.pot` a
/// translator starts from: `(msgid, plural)` in order of appearance. Only
/// literal strings are found (a text made at render time cannot be).
pub fn extract_texts(source: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find('_') {
        let head = &rest[..at];
        let tail = &rest[at + 1..];
        rest = tail;
        // `_(`, `_n(` or `N_(`, not part of a longer name.
        let head = head.strip_suffix('N').unwrap_or(head);
        let before = head.chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        let (plural, args) = match tail.strip_prefix("n(") {
            Some(args) => (true, args),
            None => match tail.strip_prefix('(') {
                Some(args) => (false, args),
                None => continue,
            },
        };
        let Some((first, after)) = string_literal(args.trim_start()) else {
            continue;
        };
        if plural {
            let after = after.trim_start();
            let Some(after) = after.strip_prefix(',') else {
                continue;
            };
            let Some((second, _)) = string_literal(after.trim_start()) else {
                continue;
            };
            found.push((first, Some(second)));
        } else {
            found.push((first, None));
        }
    }
    found
}

/// A quoted string at the start of `text` (as minijinja reads it: `"..."` or
/// `'...'` with backslash escapes), and what follows it.
fn string_literal(text: &str) -> Option<(String, &str)> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let mut out = String::new();
    let mut chars = text[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c if c == quote => return Some((out, &text[1 + i + 1..])),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(rule: &str, forms: usize, n: u64) -> usize {
        PluralRule::parse(rule, forms).unwrap().form(n)
    }

    #[test]
    fn plural_rules_of_real_languages_pick_the_right_form() {
        // Dutch and English.
        assert_eq!(form("(n != 1)", 2, 1), 0);
        assert_eq!(form("(n != 1)", 2, 0), 1);
        // Polish: 1, 2-4 (not 12-14), the rest.
        let polish = "(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)";
        let forms: Vec<usize> = [1, 2, 4, 5, 12, 22, 25, 112]
            .iter()
            .map(|n| form(polish, 3, *n))
            .collect();
        assert_eq!(forms, [0, 1, 1, 2, 2, 1, 2, 2]);
        // Japanese: one form; a rule answering past the last form is capped.
        assert_eq!(form("0", 1, 5), 0);
        assert_eq!(form("n", 2, 7), 1);
        assert!(PluralRule::parse("n ? 1", 2).is_err());
        assert!(PluralRule::parse("system(1)", 2).is_err());
    }

    /// A catalog of Dutch with `messages` (a `.po` file's entries).
    fn dutch(messages: &str) -> Catalogs {
        let mut catalogs = Catalogs::default();
        let header = "msgid \"\"\nmsgstr \"\"\n\"Language: nl\\n\"\n\n";
        catalogs.add("nl", "nl.po", &format!("{header}{messages}"));
        assert!(catalogs.errors().is_empty(), "{:?}", catalogs.errors());
        catalogs
    }

    #[test]
    fn a_page_without_models_translates_in_the_language_it_is_given() {
        let catalogs = dutch(
            "msgid \"Read more\"\nmsgstr \"Lees <meer>\"\n\n\
             msgid \"Hello {name}\"\nmsgstr \"Hallo {name}\"\n",
        );
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        register(&mut env, Arc::new(catalogs));
        let page = "{{ _('Read more') }}|{{ _('Hello {name}', name='<b>') }}|{{ _(unset) }}|\
                    {{ _('Tom & Jerry') }}|{{ _('{{braces}}') }}";
        let render = |language: &str| {
            env.render_str(page, minijinja::context! { language => language })
                .unwrap()
        };
        assert_eq!(
            render("nl"),
            "Lees &lt;meer&gt;|Hallo &lt;b&gt;||Tom &amp; Jerry|{braces}",
            "translated, filled and escaped; an unset text shows nothing"
        );
        assert_eq!(
            render("en"),
            "Read more|Hello &lt;b&gt;||Tom &amp; Jerry|{braces}",
            "the text as written"
        );
    }

    #[test]
    fn texts_are_found_in_calls_with_literal_strings() {
        let found = extract_texts(
            r#"{{ _("Read more") }} {{ _('It\'s {n}') }} {{ _n("{n} comment", "{n} comments", c) }}
               {{ my_("not this") }} {{ x._("nor this") }} {{ _(variable) }} {{ N_("Marked") }}
               {{ AN_("not this either") }}"#,
        );
        assert_eq!(
            found,
            vec![
                ("Read more".to_owned(), None),
                ("It's {n}".to_owned(), None),
                ("{n} comment".to_owned(), Some("{n} comments".to_owned())),
                ("Marked".to_owned(), None),
            ]
        );
    }

    #[test]
    fn scripts_get_the_texts_placed_in_scripts_and_translated() {
        let catalogs = dutch(
            "#: admin.tpl\nmsgid \"Save\"\nmsgstr \"Opslaan\"\n\n\
             #: admin.tpl js/admin.js:12\nmsgid \"Saved {name}\"\nmsgstr \"{name} opgeslagen\"\n\n\
             #: js/admin.js\nmsgid \"Not saved\"\nmsgstr \"\"\n\n\
             #: js/admin.js\n#, fuzzy\nmsgid \"Working\"\nmsgstr \"Bezig\"\n",
        );
        assert!(catalogs.errors().is_empty(), "{:?}", catalogs.errors());
        let texts = catalogs.script_texts("nl", &[]);
        assert_eq!(
            serde_json::Value::Object(texts),
            serde_json::json!({"Saved {name}": "{name} opgeslagen"}),
            "only translated texts a script uses"
        );
        let other = catalogs.script_texts("nl", &["js/other.js".to_owned()]);
        assert!(other.is_empty(), "not another script's: {other:?}");
        let named = catalogs.script_texts("nl", &["js/admin.js".to_owned()]);
        assert_eq!(named.len(), 1, "the named script's: {named:?}");
        assert!(
            catalogs.script_texts("de", &[]).is_empty(),
            "no German catalog"
        );
    }

    #[test]
    fn a_catalog_translates_in_the_first_language_that_has_the_text() {
        let mut catalogs = Catalogs::default();
        catalogs.add(
            "nl",
            "nl.po",
            "msgid \"\"\nmsgstr \"\"\n\"Language: nl\\n\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\
             \"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"\n\n\
             msgid \"Read more\"\nmsgstr \"Lees meer\"\n\n\
             #, fuzzy\nmsgid \"Draft\"\nmsgstr \"Klad\"\n\n\
             msgid \"{n} comment\"\nmsgid_plural \"{n} comments\"\nmsgstr[0] \"{n} reactie\"\nmsgstr[1] \"{n} reacties\"\n",
        );
        assert!(catalogs.errors().is_empty(), "{:?}", catalogs.errors());
        let nl = ["nl".to_owned(), "en".to_owned()];
        assert_eq!(catalogs.text(&nl, "Read more"), "Lees meer");
        assert_eq!(
            catalogs.text(&nl, "Draft"),
            "Draft",
            "fuzzy is not a translation"
        );
        assert_eq!(catalogs.text(&["en".to_owned()], "Read more"), "Read more");
        let en_then_nl = ["en".to_owned(), "nl".to_owned()];
        assert_eq!(
            catalogs.text(&en_then_nl, "Read more"),
            "Read more",
            "not Dutch"
        );
        assert_eq!(
            catalogs.plural_text(&nl, "{n} comment", "{n} comments", 3),
            "{n} reacties"
        );
        assert_eq!(
            catalogs.plural_text(&nl, "{n} comment", "{n} comments", 1),
            "{n} reactie"
        );
        assert_eq!(
            catalogs.plural_text(&[], "{n} comment", "{n} comments", 1),
            "{n} comment"
        );
    }
}
