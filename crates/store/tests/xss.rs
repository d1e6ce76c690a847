//! Known XSS attack strings (OWASP filter-evasion cheat sheet style) stored in
//! a body property come back with nothing executable, on both backends.

mod common;

use bulwark_store::*;

on_both_backends!(
    xss_attack_strings_in_body_come_back_harmless,
    xss_attack_strings_in_text_properties_come_back_as_text,
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
];

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

/// Parse the (ammonia-serialised, so well-formed) HTML and fail on anything
/// a browser could execute: unknown tags, event handlers, styles, and URLs
/// with a scheme other than http, https or mailto.
fn assert_nothing_executable(input: &str, html: &str) {
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let end = after
            .find('>')
            .unwrap_or_else(|| panic!("{input:?}: unterminated tag in {html:?}"));
        let tag = &after[..end];
        rest = &after[end + 1..];
        let tag = tag.trim_start_matches('/').trim_end_matches('/');
        let mut parts = tag.splitn(2, char::is_whitespace);
        let name = parts.next().unwrap().to_ascii_lowercase();
        assert!(
            SAFE_TAGS.contains(&name.as_str()),
            "{input:?}: tag <{name}> in {html:?}"
        );
        let mut attrs = parts.next().unwrap_or("").trim();
        while !attrs.is_empty() {
            let eq = attrs.find('=').unwrap_or(attrs.len());
            let attr = attrs[..eq].trim().to_ascii_lowercase();
            assert!(
                SAFE_ATTRS.contains(&attr.as_str()),
                "{input:?}: attribute {attr} in {html:?}"
            );
            if eq == attrs.len() {
                break;
            }
            // ammonia always double-quotes values and escapes quotes inside.
            let v = attrs[eq + 1..].trim_start();
            assert!(v.starts_with('"'), "{input:?}: unquoted value in {html:?}");
            let close = v[1..].find('"').expect("closing quote") + 1;
            let value = decode_entities(&v[1..close]);
            attrs = v[close + 1..].trim_start();
            if matches!(attr.as_str(), "href" | "src" | "cite") {
                let compact: String = value
                    .chars()
                    .filter(|c| !c.is_whitespace() && !c.is_control())
                    .collect::<String>()
                    .to_ascii_lowercase();
                if let Some(colon) = compact.find(':') {
                    let scheme = &compact[..colon];
                    let is_scheme = !scheme.contains(['/', '?', '#']);
                    assert!(
                        !is_scheme || matches!(scheme, "http" | "https" | "mailto"),
                        "{input:?}: URL {value:?} in {html:?}"
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
