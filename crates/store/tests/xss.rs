//! Known XSS attack strings (OWASP filter-evasion cheat sheet style) stored in
//! a body property come back with nothing executable, on both backends; and
//! every stored value stays inert wherever a template prints it: as element
//! content, or inside a double- or single-quoted attribute.

use bulwark_store::*;

on_both_backends!(
    xss_attack_strings_in_body_come_back_harmless,
    xss_attack_strings_in_text_properties_come_back_as_text,
    stored_values_run_nothing_as_element_content_or_inside_quoted_attributes,
    html_stored_by_the_old_sanitiser_is_sanitised_again_once_when_the_store_opens,
);

const ATTACKS: &[&str] = &[
    "<script>alert('XSS')</script>",
    "<SCRIPT SRC=http://xss.rocks/xss.js></SCRIPT>",
    "<IMG SRC=\"javascript:alert('XSS');\">",
    "<IMG SRC=javascript:alert('XSS')>",
    "<IMG SRC=JaVaScRiPt:alert('XSS')>",
    "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
    "<a onmouseover=\"alert(document.cookie)\">xxs link</a>",
    "<a onmouseover=alert(document.cookie)>xxs link</a>",
    "<IMG \"\"\"><SCRIPT>alert(\"XSS\")</SCRIPT>\"\\>",
    "<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>",
    "<IMG SRC=# onmouseover=\"alert('xxs')\">",
    "<IMG SRC= onmouseover=\"alert('xxs')\">",
    "<IMG onmouseover=\"alert('xxs')\">",
    "<IMG SRC=/ onerror=\"alert(String.fromCharCode(88,83,83))\"></img>",
    "<img src=x onerror=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041\">",
    "<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>",
    "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>",
    "<IMG SRC=\"jav\tascript:alert('XSS');\">",
    "<IMG SRC=\"jav&#x09;ascript:alert('XSS');\">",
    "<IMG SRC=\"jav&#x0A;ascript:alert('XSS');\">",
    "<IMG SRC=\" &#14;  javascript:alert('XSS');\">",
    "<SCRIPT/XSS SRC=\"http://xss.rocks/xss.js\"></SCRIPT>",
    "<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert(\"XSS\")>",
    "<<SCRIPT>alert(\"XSS\");//<</SCRIPT>",
    "<SCRIPT SRC=http://xss.rocks/xss.js?< B >",
    "<IMG SRC=\"`<javascript:alert>`('XSS')\"",
    "</TITLE><SCRIPT>alert(\"XSS\");</SCRIPT>",
    "<INPUT TYPE=\"IMAGE\" SRC=\"javascript:alert('XSS');\">",
    "<BODY BACKGROUND=\"javascript:alert('XSS')\">",
    "<IMG DYNSRC=\"javascript:alert('XSS')\">",
    "<STYLE>li {list-style-image: url(\"javascript:alert('XSS')\");}</STYLE><UL><LI>XSS</br>",
    "<svg/onload=alert('XSS')>",
    "<BODY ONLOAD=alert('XSS')>",
    "<BGSOUND SRC=\"javascript:alert('XSS');\">",
    "<LINK REL=\"stylesheet\" HREF=\"javascript:alert('XSS');\">",
    "<STYLE>@import'http://xss.rocks/xss.css';</STYLE>",
    "<META HTTP-EQUIV=\"refresh\" CONTENT=\"0;url=javascript:alert('XSS');\">",
    "<IFRAME SRC=\"javascript:alert('XSS');\"></IFRAME>",
    "<FRAMESET><FRAME SRC=\"javascript:alert('XSS');\"></FRAMESET>",
    "<TABLE BACKGROUND=\"javascript:alert('XSS')\">",
    "<TABLE><TD BACKGROUND=\"javascript:alert('XSS')\">",
    "<DIV STYLE=\"background-image: url(javascript:alert('XSS'))\">",
    "<DIV STYLE=\"width: expression(alert('XSS'));\">",
    "<IMG STYLE=\"xss:expr/*XSS*/ession(alert('XSS'))\">",
    "<OBJECT TYPE=\"text/x-scriptlet\" DATA=\"http://xss.rocks/scriptlet.html\"></OBJECT>",
    "<EMBED SRC=\"data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==\" type=\"image/svg+xml\" AllowScriptAccess=\"always\"></EMBED>",
    "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>",
    "<a href=\"vbscript:msgbox('XSS')\">x</a>",
    "<a href=\"  javascript:alert(1)\">x</a>",
    "<a href=\"java&#0000115cript:alert(1)\">x</a>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    "<form><button formaction=javascript:alert(1)>X</button></form>",
    "<details open ontoggle=alert(1)>",
    "<base href=\"javascript:alert(1)//\">",
    "<!--<img src=\"--><img src=x onerror=alert(1)//\">",
    "<img src=\"x` `<script>alert(1)</script>\"` `>",
    "<xss onafterscriptexecute=alert(1)><script>1</script>",
    "\"><script>alert(1)</script>",
    "'><img src=x onerror=alert(1)>",
    "&#106;avascript:alert(1)",
    "java&#x09;script:alert(1)",
    "&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1)",
    // Made to break out of the attribute a template prints the value in.
    "\" onerror=\"alert(1)",
    "' onerror='alert(1)",
    "\"><img src=x onerror=alert(1)>",
    "x\" onmouseover=\"alert(1)\" y=\"",
    "<a href=\" onerror=alert(1) x\">y</a>",
    "<a href=' onerror=alert(1) x'>y</a>",
    "<a href=\"/x?a=1&b=2\" title='Tom & \"Jerry\"'>link</a>",
    "<a href=\"x\" title=\"a' onmouseover='alert(1)\">t</a>",
    "<abbr title=\"' onmouseover='alert(1)'\">x</abbr>",
    "<abbr title='\" onmouseover=\"alert(1)\"'>x</abbr>",
    "<span class=\"a b' onclick='alert(1)\">x</span>",
    "<span lang=\"en\\\" onclick=alert(1)\">x</span>",
    "<img src=\"/a.png\" alt=\"\\\" onerror=alert(1)//\">",
    "<img src=\"/a.png\" alt=\"&quot; onerror=&quot;alert(1)\">",
    "<img src=\"/a.png\" alt=\"&#34; onerror=&#34;alert(1)\">",
    "<img src=\"/a.png\" alt=\"&#39; onerror=&#39;alert(1)\">",
    "<img src=\"/a.png\" width=\"1\" height=\"1 onerror=alert(1)\">",
    "<img src=x alt=``onerror=alert(1)``>",
    "<a title=\"x`y` onerror=alert(1)\">t</a>",
    "<td colspan=\"2 onmouseover=alert(1)\">x</td>",
    "<q cite=\" onmouseover=alert(1) \">x</q>",
    "<blockquote cite=\"javascript:alert(1)\">x</blockquote>",
    "<a href=\"javascript&colon;alert(1)\">x</a>",
    "<a href=\"&#x6a;avascript:alert(1)\">x</a>",
    "<p title=\"</p><img src=x onerror=alert(1)>\">x</p>",
    "<p title=\"&lt;img src=x onerror=alert(1)&gt;\">x</p>",
    "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;",
    "&#39;&gt;&lt;img src=x onerror=alert(1)&gt;",
    "<a href=\"x\" title=\"=\">=</a>",
    "<a href=\"/p?q='&quot;\">quotes in a URL</a>",
    "<a href=\"/tab\there\">whitespace in a URL</a>",
    "<em title=\"line\nbreak\" lang=\"a\u{a0}b\">x</em>",
];

/// A broad list: the cheat sheet's and the attribute breakers above.
#[test]
fn the_attack_list_is_broad() {
    assert!(ATTACKS.len() >= 90, "only {} attack strings", ATTACKS.len());
}

/// The tags and attributes the body whitelist allows.
const SAFE_TAGS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "caption",
    "cite",
    "code",
    "dd",
    "del",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "u",
    "ul",
];
const SAFE_ATTRS: &[&str] = &[
    "href", "src", "alt", "width", "height", "title", "lang", "class", "colspan", "rowspan",
    "scope", "cite", "rel",
];

fn decode_entities(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Read the stored HTML as a browser's tokenizer does and fail on anything a
/// browser could execute: unknown tags, event handlers, styles, and URLs with
/// a scheme other than http, https or mailto.
fn assert_nothing_executable(input: &str, html: &str) {
    for tag in start_tags(html) {
        let name = tag.name.to_string();
        assert!(
            SAFE_TAGS.contains(&name.as_str()),
            "{input:?}: tag <{name}> in {html:?}"
        );
        for attr in &tag.attrs {
            let attr_name = attr.name.local.to_string();
            assert!(
                SAFE_ATTRS.contains(&attr_name.as_str()),
                "{input:?}: attribute {attr_name} in {html:?}"
            );
            if matches!(attr_name.as_str(), "href" | "src" | "cite") {
                let compact: String = attr
                    .value
                    .chars()
                    .filter(|c| !c.is_whitespace() && !c.is_control())
                    .collect::<String>()
                    .to_ascii_lowercase();
                if let Some(colon) = compact.find(':') {
                    let scheme = &compact[..colon];
                    let is_scheme = !scheme.contains(['/', '?', '#']);
                    assert!(
                        !is_scheme || matches!(scheme, "http" | "https" | "mailto"),
                        "{input:?}: URL {:?} in {html:?}",
                        attr.value
                    );
                }
            }
        }
    }
    // Text outside tags is escaped: no raw markup survives.
    let lower = html.to_ascii_lowercase();
    for bad in [
        "<script", "<iframe", "<object", "<embed", "<svg", "<style", "<meta", "<link", "<base",
        "<form",
    ] {
        assert!(!lower.contains(bad), "{input:?}: {bad} in {html:?}");
    }
}

fn xss_attack_strings_in_body_come_back_harmless(s: &Store) {
    assert!(ATTACKS.len() >= 40, "only {} attack strings", ATTACKS.len());
    let ids = s
        .create_resources(
            ATTACKS
                .iter()
                .map(|a| NewResource::new("article", Props::new().with("body", *a)))
                .collect(),
        )
        .unwrap();
    for (attack, id) in ATTACKS.iter().zip(ids) {
        let r = s.resource(id).unwrap().unwrap();
        let body = r.props.str("body").unwrap();
        assert_nothing_executable(attack, body);
    }
}

fn xss_attack_strings_in_text_properties_come_back_as_text(s: &Store) {
    for attack in ATTACKS {
        let id = s
            .create_resource(NewResource::new(
                "article",
                Props::new().with("title", *attack).with("website", *attack),
            ))
            .unwrap();
        let r = s.resource(id).unwrap().unwrap();
        for key in ["title", "website"] {
            let v = r.props.str(key).unwrap();
            // Text has no tags at all, and quotes are escaped, so it is safe
            // both as element content and inside a quoted attribute.
            assert!(
                !v.contains(['<', '>', '"', '\'']),
                "{attack:?} -> {key} {v:?}"
            );
        }
        // What a browser sees in href="{{ website }}": no script scheme.
        let seen: String = decode_entities(r.props.str("website").unwrap())
            .chars()
            .filter(|c| !c.is_whitespace() && !c.is_control())
            .collect::<String>()
            .to_ascii_lowercase();
        for scheme in ["javascript:", "vbscript:", "data:"] {
            assert!(!seen.contains(scheme), "{attack:?} -> website {seen:?}");
        }
    }
}

/// Where a template prints a stored value (the value goes in as it is: stored
/// strings are marked safe).
const CONTEXTS: &[(&str, &str)] = &[
    ("element content", "<div>{}</div>"),
    ("double-quoted attribute", "<img src=/ok.png alt=\"{}\">"),
    ("single-quoted attribute", "<img src=/ok.png alt='{}'>"),
];

/// The tags of `html` as a browser's tokenizer reads them (start tags only:
/// attributes live there).
fn start_tags(html: &str) -> Vec<html5ever::tokenizer::Tag> {
    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::{
        BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer,
    };
    use std::cell::RefCell;

    struct Tags(RefCell<Vec<html5ever::tokenizer::Tag>>);
    impl TokenSink for Tags {
        type Handle = ();
        fn process_token(&self, token: Token, _: u64) -> TokenSinkResult<()> {
            if let Token::TagToken(tag) = token
                && tag.kind == TagKind::StartTag
            {
                self.0.borrow_mut().push(tag);
            }
            TokenSinkResult::Continue
        }
    }
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(Tags(RefCell::new(Vec::new())), Default::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.0.into_inner()
}

/// A URL a browser would run or load as a document.
fn is_script_url(value: &str) -> bool {
    let seen: String = value
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:"]
        .iter()
        .any(|s| seen.starts_with(s))
}

/// `page` (a stored value printed in one context) has no tag outside the
/// whitelist, no event handler and no script URL; printed in an attribute it
/// is that attribute's value and nothing more.
fn assert_inert(attack: &str, key: &str, context: &str, page: &str) {
    let tags = start_tags(page);
    let what = format!("{attack:?} in {key}, {context}: {page:?}");
    for tag in &tags {
        let name = tag.name.to_string();
        assert!(
            SAFE_TAGS.contains(&name.as_str()) || name == "div",
            "{what}: tag <{name}>"
        );
        for attr in &tag.attrs {
            let attr_name = attr.name.local.to_string();
            assert!(
                !attr_name.starts_with("on"),
                "{what}: event handler {attr_name}"
            );
            assert!(
                SAFE_ATTRS.contains(&attr_name.as_str()),
                "{what}: attribute {attr_name}"
            );
            if matches!(attr_name.as_str(), "href" | "src" | "cite") {
                assert!(!is_script_url(&attr.value), "{what}: URL {}", attr.value);
            }
        }
    }
    if context != "element content" {
        assert_eq!(tags.len(), 1, "{what}: the value made tags of its own");
        let names: Vec<String> = tags[0]
            .attrs
            .iter()
            .map(|a| a.name.local.to_string())
            .collect();
        assert_eq!(names, ["src", "alt"], "{what}: the value made attributes");
    }
}

fn stored_values_run_nothing_as_element_content_or_inside_quoted_attributes(s: &Store) {
    // Three HTML properties and three text ones: six, as the attack tried.
    const KEYS: &[&str] = &[
        "body",
        "summary",
        "intro_html",
        "title",
        "subtitle",
        "website",
    ];
    let ids = s
        .create_resources(
            ATTACKS
                .iter()
                .map(|a| {
                    let props = KEYS
                        .iter()
                        .fold(Props::new(), |props, key| props.with(key, *a));
                    NewResource::new("article", props)
                })
                .collect(),
        )
        .unwrap();
    for (attack, id) in ATTACKS.iter().zip(ids) {
        let r = s.resource(id).unwrap().unwrap();
        for key in KEYS {
            let value = r.props.str(key).unwrap();
            assert!(
                !value.contains(['"', '\'']),
                "{attack:?} -> {key} {value:?} keeps a raw quote"
            );
            for (context, template) in CONTEXTS {
                assert_inert(attack, key, context, &template.replace("{}", value));
            }
        }
    }
}

fn html_stored_by_the_old_sanitiser_is_sanitised_again_once_when_the_store_opens(s: &Store) {
    // What the sanitiser before this one stored: ammonia's output, quotes and all.
    const OLD_BODY: &str = r#"<p title="a &quot;b&quot;">it's <a href=" onerror=alert(1) x" rel="noopener noreferrer">x</a></p>"#;
    let id = s
        .create_resource(NewResource::new("article", Props::new().with("title", "t")))
        .unwrap();
    let version = s.resource(id).unwrap().unwrap().version;
    let old_props = serde_json::to_string(&Props::new().with("title", "t").with("body", OLD_BODY))
        .unwrap()
        .replace('\'', "''");
    // Put the database back to before the re-sanitising migration, with a
    // value written by the old sanitiser (a module migration runs raw SQL).
    let sql: &'static str = Box::leak(
        format!(
            "UPDATE rsc SET props = '{old_props}' WHERE id = {id};
             DELETE FROM schema_migrations WHERE version = 6;"
        )
        .into_boxed_str(),
    );
    s.migrate_module(
        "before_upgrade",
        &[Migration {
            version: 1,
            name: "old_body",
            sqlite: sql,
            postgres: sql,
        }],
    )
    .unwrap();
    assert_eq!(
        s.resource(id).unwrap().unwrap().props.str("body"),
        Some(OLD_BODY)
    );

    let handle = tokio::runtime::Handle::current();
    let reopened = handle.block_on(Store::open(s.config().clone())).unwrap();
    let r = reopened.resource(id).unwrap().unwrap();
    let body = r.props.str("body").unwrap();
    assert_eq!(
        body,
        "<p title=a&#32;&quot;b&quot;>it&#39;s <a href=&#32;onerror&#61;alert(1)&#32;x rel=noopener&#32;noreferrer>x</a></p>"
    );
    // Stored again, not changed: same version, no revision.
    assert_eq!(r.version, version);
    assert!(reopened.revisions(id).unwrap().is_empty());

    // The migration is recorded: opening again does not run it again (an old
    // value written now, without taking the marker away, stays as it is).
    let sql: &'static str = Box::leak(
        format!("UPDATE rsc SET props = '{old_props}' WHERE id = {id};").into_boxed_str(),
    );
    reopened
        .migrate_module(
            "after_upgrade",
            &[Migration {
                version: 1,
                name: "old_body",
                sqlite: sql,
                postgres: sql,
            }],
        )
        .unwrap();
    let again = handle.block_on(Store::open(s.config().clone())).unwrap();
    assert_eq!(
        again.resource(id).unwrap().unwrap().props.str("body"),
        Some(OLD_BODY)
    );
}
